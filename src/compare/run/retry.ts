// `--retry-infra n`: which infrastructure errors are worth another attempt, and keeping every
// attempt's evidence. A retried trial's folder holds its last attempt; each earlier one moves to
// `attempts/<n>/` inside it, so nothing an attempt wrote is lost.
import { mkdir, readdir, rename, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import {
  type TrialAttempt,
  type TrialInfraReason,
  type TrialMetrics,
  trialMetricsSchema,
} from "../../artifacts/index.js";
import { readValidJsonFile } from "../../shared/index.js";

/** The folder, inside a trial's folder, that keeps its earlier attempts. */
const ATTEMPTS_DIR = "attempts";

/**
 * Reasons that fail the same way on every attempt (a missing credential, binary or runtime, an
 * invalid configuration, an exhausted quota, a protocol the client does not speak, a broken
 * grader) or that the user asked for (an interrupted run): retrying them only spends time and
 * money. Everything else (network, rate limits, a crashed or hung executor, a failed spawn, a
 * copy, git or patch step that broke) may pass on another attempt.
 */
const NOT_RETRIED: ReadonlySet<TrialInfraReason> = new Set([
  "run_aborted",
  "auth_missing",
  "binary_missing",
  "runtime_missing",
  "config_invalid",
  // The experimenter's scripted agent is broken: it breaks the same way on every attempt.
  "scripted_agent_failed",
  "quota_exhausted",
  "protocol_mismatch",
  // A grader that broke (its program missing, its contract unusable) breaks again on every
  // attempt, and each attempt pays for a whole agent run: fix it and `compare regrade` instead.
  "grader_failed",
]);

export function isRetryableInfraError(metrics: TrialMetrics): boolean {
  return (
    metrics.outcome === "infrastructure_error" &&
    metrics.infraReason !== null &&
    !NOT_RETRIED.has(metrics.infraReason)
  );
}

/** Reasons worth waiting for before the next attempt: the service may need a moment. */
const BACK_OFF: ReadonlySet<TrialInfraReason> = new Set([
  "rate_limited",
  "network_unreachable",
  // Space may come back as other trials end and remove their copies.
  "disk_full",
]);

/** How long to wait before attempt `attempt + 1` (exponential for rate limits and network errors). */
export function retryDelayMs(metrics: TrialMetrics, attempt: number, baseMs: number): number {
  if (metrics.infraReason === null || !BACK_OFF.has(metrics.infraReason)) return 0;
  return baseMs * 2 ** (attempt - 1);
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** Where an attempt is assembled before it becomes `attempts/<n>`. */
const STAGING = (attempt: number) => `.${attempt}.partial`;

/**
 * Moves everything a finished attempt wrote into `attempts/<attempt>/` and returns its record.
 * The files gather in a staging folder, metrics.json last, which is then renamed into place:
 * a run killed part-way leaves either the attempt at the top or a staging folder that
 * `prepareTrialFolder` completes, never an attempt split in two.
 */
export async function archiveAttempt(
  artifactDir: string,
  attempt: number,
  metrics: TrialMetrics,
): Promise<TrialAttempt> {
  // A number an unreadable earlier attempt folder holds is skipped, never overwritten.
  let number = attempt;
  while (await exists(join(artifactDir, ATTEMPTS_DIR, String(number)))) number += 1;
  const staging = join(artifactDir, ATTEMPTS_DIR, STAGING(number));
  await mkdir(staging, { recursive: true });
  await moveTopFiles(artifactDir, staging);
  await rename(staging, join(artifactDir, ATTEMPTS_DIR, String(number)));
  return attemptOf(number, metrics);
}

/** Moves a trial folder's own files (not `attempts/`) into `target`, metrics.json last. */
async function moveTopFiles(artifactDir: string, target: string): Promise<void> {
  const names = (await readdir(artifactDir)).filter((name) => name !== ATTEMPTS_DIR);
  const ordered = [
    ...names.filter((n) => n !== "metrics.json"),
    ...names.filter((n) => n === "metrics.json"),
  ];
  for (const name of ordered) await rename(join(artifactDir, name), join(target, name));
}

function readMetrics(path: string): Promise<TrialMetrics | undefined> {
  return readValidJsonFile(path, trialMetricsSchema);
}

function attemptOf(attempt: number, metrics: TrialMetrics): TrialAttempt {
  return {
    attempt,
    infraReason: metrics.infraReason,
    explanation: metrics.explanation,
    dir: join(ATTEMPTS_DIR, String(attempt)),
    durationMs: metrics.durationMs,
    costUsd: metrics.costUsd,
  };
}

/**
 * Readies a trial folder for its next attempt and returns the attempts it already had. Earlier
 * attempts (`attempts/<n>/` with their records) are kept, so a resumed trial keeps every
 * attempt it paid for; an attempt a killed run was archiving is completed; a finished record
 * left at the top (a run killed between an attempt and its retry) becomes the next earlier
 * attempt; anything else at the top, an unfinished attempt's files, is removed. An attempt
 * folder whose record cannot be read is left as it is, uncounted, and never reused.
 */
export async function prepareTrialFolder(artifactDir: string): Promise<TrialAttempt[]> {
  const attemptsDir = join(artifactDir, ATTEMPTS_DIR);
  const names = await readdir(attemptsDir).catch(() => [] as string[]);
  for (const name of names) {
    const staged = /^\.(\d+)\.partial$/.exec(name);
    if (!staged) continue;
    const staging = join(attemptsDir, name);
    if (await readMetrics(join(staging, "metrics.json"))) {
      // Killed after the record moved: the rest of the attempt is what is left at the top.
      await moveTopFiles(artifactDir, staging);
      await rename(staging, join(attemptsDir, staged[1] as string));
    } else {
      // Killed before: put the files back; the record at the top is archived again below.
      for (const file of await readdir(staging))
        await rename(join(staging, file), join(artifactDir, file));
      await rm(staging, { recursive: true, force: true });
    }
  }
  const numbers = (await readdir(attemptsDir).catch(() => [] as string[]))
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .sort((a, b) => a - b);
  const attempts: TrialAttempt[] = [];
  for (const n of numbers) {
    const record = await readMetrics(join(attemptsDir, String(n), "metrics.json"));
    if (record !== undefined) attempts.push(attemptOf(n, record));
  }
  const top = await readMetrics(join(artifactDir, "metrics.json"));
  if (top !== undefined && isRetryableInfraError(top))
    attempts.push(await archiveAttempt(artifactDir, (numbers.at(-1) ?? 0) + 1, top));
  for (const name of await readdir(artifactDir).catch(() => [] as string[]))
    if (name !== ATTEMPTS_DIR) await rm(join(artifactDir, name), { recursive: true, force: true });
  return attempts;
}

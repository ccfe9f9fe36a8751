// `--retry-infra n`: which infrastructure errors are worth another attempt, and keeping every
// attempt's evidence. A retried trial's folder holds its last attempt; each earlier one moves to
// `attempts/<n>/` inside it, so nothing an attempt wrote is lost.
import { mkdir, readdir, readFile, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import {
  type TrialAttempt,
  type TrialInfraReason,
  type TrialMetrics,
  trialMetricsSchema,
} from "./artifacts-contract.js";

/** The folder, inside a trial's folder, that keeps its earlier attempts. */
export const ATTEMPTS_DIR = "attempts";

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
const BACK_OFF: ReadonlySet<TrialInfraReason> = new Set(["rate_limited", "network_unreachable"]);

/** How long to wait before attempt `attempt + 1` (exponential for rate limits and network errors). */
export function retryDelayMs(metrics: TrialMetrics, attempt: number, baseMs: number): number {
  if (metrics.infraReason === null || !BACK_OFF.has(metrics.infraReason)) return 0;
  return baseMs * 2 ** (attempt - 1);
}

/**
 * Moves everything a finished attempt wrote into `attempts/<attempt>/` and returns its record.
 * metrics.json moves first, so a crash in between never leaves the folder looking finished.
 */
export async function archiveAttempt(
  artifactDir: string,
  attempt: number,
  metrics: TrialMetrics,
): Promise<TrialAttempt> {
  const dir = join(ATTEMPTS_DIR, String(attempt));
  const target = join(artifactDir, dir);
  await mkdir(target, { recursive: true });
  await rename(join(artifactDir, "metrics.json"), join(target, "metrics.json")).catch(
    (error: NodeJS.ErrnoException) => {
      if (error.code !== "ENOENT") throw error;
    },
  );
  for (const name of await readdir(artifactDir)) {
    if (name === ATTEMPTS_DIR) continue;
    await rename(join(artifactDir, name), join(target, name));
  }
  return {
    attempt,
    infraReason: metrics.infraReason,
    explanation: metrics.explanation,
    dir,
    durationMs: metrics.durationMs,
    costUsd: metrics.costUsd,
  };
}

async function readMetrics(path: string): Promise<TrialMetrics | undefined> {
  try {
    const parsed = trialMetricsSchema.safeParse(JSON.parse(await readFile(path, "utf8")));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
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
 * attempts (`attempts/1…n`, each with its record) are kept, so a resumed trial keeps every
 * attempt it paid for; a finished record left at the top (a run killed between an attempt and
 * its retry) becomes the next earlier attempt; anything else at the top, an unfinished
 * attempt's files, is removed.
 */
export async function prepareTrialFolder(artifactDir: string): Promise<TrialAttempt[]> {
  const attempts: TrialAttempt[] = [];
  for (let n = 1; ; n += 1) {
    const record = await readMetrics(join(artifactDir, ATTEMPTS_DIR, String(n), "metrics.json"));
    if (record === undefined) break;
    attempts.push(attemptOf(n, record));
  }
  // Attempt folders past the first gap have no record to account for them.
  const kept = new Set(attempts.map((a) => String(a.attempt)));
  for (const name of await readdir(join(artifactDir, ATTEMPTS_DIR)).catch(() => [] as string[]))
    if (!kept.has(name))
      await rm(join(artifactDir, ATTEMPTS_DIR, name), { recursive: true, force: true });
  const top = await readMetrics(join(artifactDir, "metrics.json"));
  if (top !== undefined && isRetryableInfraError(top)) {
    attempts.push(await archiveAttempt(artifactDir, attempts.length + 1, top));
  }
  for (const name of await readdir(artifactDir).catch(() => [] as string[]))
    if (name !== ATTEMPTS_DIR) await rm(join(artifactDir, name), { recursive: true, force: true });
  return attempts;
}

// `--retry-infra n`: which infrastructure errors are worth another attempt, and keeping every
// attempt's evidence. A retried trial's folder holds its last attempt; each earlier one moves to
// `attempts/<n>/` inside it, so nothing an attempt wrote is lost.
import { mkdir, readdir, rename } from "node:fs/promises";
import { join } from "node:path";
import type { TrialAttempt, TrialInfraReason, TrialMetrics } from "./artifacts-contract.js";

/** The folder, inside a trial's folder, that keeps its earlier attempts. */
export const ATTEMPTS_DIR = "attempts";

/**
 * Reasons that fail the same way on every attempt (a missing credential, binary or runtime, an
 * invalid configuration) or that the user asked for (an interrupted run): retrying them only
 * spends time. Everything else (network, rate limits, a crashed or hung executor, a git or
 * grader step that broke) may pass on another attempt.
 */
const NOT_RETRIED: ReadonlySet<TrialInfraReason> = new Set([
  "run_aborted",
  "auth_missing",
  "binary_missing",
  "runtime_missing",
  "config_invalid",
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

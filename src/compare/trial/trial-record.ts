// What run and regrade both make of a graded trial, in one place so the two cannot drift: how
// temporary paths and credentials are masked in everything stored, which checks a grader failed,
// and the words of a verdict that stopped early.
import { join, sep } from "node:path";
import type { TrialMetrics } from "../../artifacts/index.js";
import { redact, redactText } from "../../exec/index.js";
import type { Grade } from "../../graders/index.js";
import { escapeRegExp } from "../../shared/index.js";
import { TRIAL_TEMP_PREFIX } from "../../workspace/index.js";

/** A grader's line in a trial's metrics: its score, whether it passed, the checks it failed. */
export function graderResults(grades: readonly Grade[]): TrialMetrics["graders"] {
  return grades.map((g) => ({
    grader: g.grader,
    score: g.score,
    passed: g.passed,
    failedChecks: g.checks.filter((c) => !c.passed).map((c) => c.id),
  }));
}

/**
 * Replaces trial temp directories under `parents` by their placeholders. A workspace scrubs its
 * own paths, but when creating it fails (a git step, the copy) its directory is already gone and
 * only the evidence still names it; this catches that case by the directory's known prefix.
 */
function scrubTrialTempDirs(text: string, parents: readonly string[]): string {
  let out = text;
  for (const parent of new Set(parents)) {
    const temp = `${escapeRegExp(join(parent, TRIAL_TEMP_PREFIX))}[A-Za-z0-9]+`;
    out = out
      .replace(new RegExp(`${temp}${escapeRegExp(`${sep}trial`)}(?![\\w.-])`, "g"), "<trial-root>")
      .replace(new RegExp(temp, "g"), "<trial-temp>");
  }
  return out;
}

/** Applies `scrub` to every string in a JSON-like value (keys stay as they are). */
function mapStrings(value: unknown, scrub: (text: string) => string): unknown {
  if (typeof value === "string") return scrub(value);
  if (Array.isArray(value)) return value.map((item) => mapStrings(item, scrub));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapStrings(v, scrub)]));
  }
  return value;
}

export interface ArtifactScrubber {
  /** Workspace paths become `<trial-root>` / `<trial-temp>`. */
  paths(text: string): string;
  /** Paths, then credential values, in a text. */
  text(text: string): string;
  /**
   * Every string of a JSON-like value. Redaction and path scrubbing work on the values, never on
   * serialized JSON text, so an artifact always stays valid JSON whatever its strings contain.
   */
  value(value: unknown): unknown;
}

/**
 * How stored evidence is masked. `workspaceScrubs` are the workspaces' own path scrubbers, read
 * at each call (a workspace made later adds its own); `tempParents` are the temporary parent
 * and its real path, since a directory may be named by either.
 */
export function artifactScrubber(input: {
  tempParents: readonly string[];
  secretValues: readonly string[];
  workspaceScrubs: () => ReadonlyArray<(text: string) => string>;
}): ArtifactScrubber {
  const paths = (text: string) =>
    scrubTrialTempDirs(
      input.workspaceScrubs().reduce((out, scrub) => scrub(out), text),
      input.tempParents,
    );
  return {
    paths,
    text: (text) => redactText(paths(text), input.secretValues),
    value: (value) => mapStrings(redact(value, { secretValues: input.secretValues }), paths),
  };
}

/** The reason of a verdict whose remaining trials could no longer change its status. */
export function stoppedEarlyReason(ran: number, planned: number, settledReason: string): string {
  return `stopped early after ${ran} of ${planned} trials, the status being settled: ${settledReason}`;
}

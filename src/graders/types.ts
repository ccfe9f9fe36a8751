import type { CommandSandbox } from "../sandbox/index.js";
import type { RepoState } from "../scoring/index.js";

/** One deterministic check inside a grade. `detail` says what was found, for a person. */
export interface GradeCheck {
  id: string;
  weight: number;
  passed: boolean;
  detail: string;
  /** Machine-readable evidence (command output tails, failing links, matched claims, per-file scope). */
  evidence?: unknown;
}

/** What every grader returns. `score` is the weighted percentage of passed checks (0–100). */
export interface Grade {
  grader: string;
  checks: GradeCheck[];
  score: number;
  passed: boolean;
  /** For a failed grade, the grader's own one-line account of why (the forge differences). */
  summary?: string;
}

/** What a grader sees of a finished trial. Paths are relative to `trialRoot`, POSIX separators. */
export interface GradeContext {
  /** Absolute path of the trial's working copy (the agent's output; untrusted). */
  trialRoot: string;
  /** Files the agent changed, added or deleted, relative to the trial root, sorted. */
  changedFiles: string[];
  /** The task's allowed change surface (expected files), relative paths. */
  expectedFiles: string[];
  /** The agent's final report text. */
  finalText: string;
  /**
   * Forge tasks: the repository's issue/pull-request state captured after the agent stopped
   * (recorded in the trial's `forge-after.json`, so a regrade grades the same state).
   */
  forgeState?: RepoState;
  signal?: AbortSignal;
  /**
   * A harness-owned directory outside the trial root, removed with the trial's workspace (also
   * by `--resume` after a killed run); temporary files of the grader belong here.
   */
  scratchDir: string;
  /**
   * Where every command the grader runs is started: the trial's files are agent-written, so
   * whatever runs them (`npm test`, an example) runs contained.
   */
  sandbox: CommandSandbox;
}

export interface Grader {
  readonly id: string;
  grade(context: GradeContext): Promise<Grade>;
}

/** Weighted percentage of passed checks, rounded to two decimals; 0 when there are no weights. */
export function weightedScore(checks: readonly GradeCheck[]): number {
  const total = checks.reduce((sum, c) => sum + c.weight, 0);
  if (total <= 0) return 0;
  const passed = checks.reduce((sum, c) => sum + (c.passed ? c.weight : 0), 0);
  return Math.round((passed / total) * 10_000) / 100;
}

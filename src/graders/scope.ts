import { posix } from "node:path";
import type { Grade, GradeCheck, GradeContext, Grader } from "./types.js";
import { weightedScore } from "./types.js";

/**
 * `subset`: every changed file must be on the allowed surface (changing nothing passes).
 * `exact`: additionally every allowed file must have changed.
 */
export type ScopeMode = "subset" | "exact";

interface ScopeEvidence {
  mode: ScopeMode;
  /** One entry per changed file, sorted. */
  files: { file: string; allowed: boolean }[];
  /** Allowed files that did not change (only `exact` fails on these). */
  unchanged: string[];
}

function normalize(file: string): string {
  const normalized = posix.normalize(file.replaceAll("\\", "/"));
  return normalized.startsWith("./") ? normalized.slice(2) : normalized;
}

/** Pure scope judgement: which changed files are allowed, which allowed files are untouched. */
export function evaluateScope(
  changedFiles: readonly string[],
  expectedFiles: readonly string[],
  mode: ScopeMode,
  weight = 1,
): GradeCheck {
  const allowed = new Set(expectedFiles.map(normalize));
  const changed = [...new Set(changedFiles.map(normalize))].sort();
  const files = changed.map((file) => ({ file, allowed: allowed.has(file) }));
  const changedSet = new Set(changed);
  const unchanged = [...allowed].filter((file) => !changedSet.has(file)).sort();
  const outside = files.filter((f) => !f.allowed).map((f) => f.file);
  const problems: string[] = [];
  if (outside.length > 0)
    problems.push(`changed outside the allowed surface: ${outside.join(", ")}`);
  if (mode === "exact" && unchanged.length > 0)
    problems.push(`expected to change but unchanged: ${unchanged.join(", ")}`);
  const evidence: ScopeEvidence = { mode, files, unchanged };
  return {
    id: "scope",
    weight,
    passed: problems.length === 0,
    detail:
      problems.length === 0
        ? mode === "exact"
          ? `changed exactly the expected files (${changed.join(", ") || "none"})`
          : `all ${changed.length} changed file(s) are on the allowed surface`
        : problems.join("; "),
    evidence,
  };
}

export interface ScopeGraderOptions {
  mode: ScopeMode;
}

/** Grades which files a trial changed against the task's allowed change surface. */
export function createScopeGrader(options: ScopeGraderOptions): Grader {
  return {
    id: "scope",
    async grade(context: GradeContext): Promise<Grade> {
      const check = evaluateScope(context.changedFiles, context.expectedFiles, options.mode);
      const checks = [check];
      return { grader: "scope", checks, score: weightedScore(checks), passed: check.passed };
    },
  };
}

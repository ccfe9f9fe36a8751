// Judging one trial (pure): from what the executor, the workspace and the graders
// reported to `passed`, `failed` or `infrastructure_error` (docs/artifacts.md).

import type { TrialInfraReason } from "../../artifacts/index.js";
import type { RuntimeReceipt } from "../../exec/index.js";
import type { Grade } from "../../graders/index.js";
import type { Outcome } from "../../stats/index.js";

/** What one trial produced, as far as it got. */
export interface TrialEvidence {
  /** A harness step that broke (copy, git, patch, grader, executor throw), if any. */
  harnessFailure?: { reason: TrialInfraReason; message: string };
  /**
   * The trial's own failure, found by the harness (it went over its disk budget): it stopped the
   * agent, so how the agent ended says nothing more.
   */
  trialFailure?: string;
  receipt?: RuntimeReceipt;
  grades?: Grade[];
}

export interface TrialClassification {
  outcome: Outcome;
  infraReason: TrialInfraReason | null;
  /** Mean of the graders' scores; null when the trial was not graded. */
  score: number | null;
  gradePassed: boolean | null;
  explanation: string;
}

const AGENT_ENDINGS: Record<string, string> = {
  agent_error: "the agent failed with an error",
  limit_reached: "the agent hit its turn or budget limit",
  timeout: "the agent ran out of time",
};

function combineGrades(grades: readonly Grade[]): {
  score: number | null;
  passed: boolean | null;
} {
  if (grades.length === 0) return { score: null, passed: null };
  const score = grades.reduce((sum, g) => sum + g.score, 0) / grades.length;
  return { score: Math.round(score * 100) / 100, passed: grades.every((g) => g.passed) };
}

/** Each failed grade's own summary when it gives one (the forge differences), else its checks. */
function failedChecks(grades: readonly Grade[]): string[] {
  return grades.flatMap((g) =>
    g.passed
      ? []
      : g.summary !== undefined
        ? [`${g.grader}: ${g.summary}`]
        : g.checks.filter((c) => !c.passed).map((c) => `${g.grader}/${c.id}`),
  );
}

/**
 * Infrastructure errors are the environment's fault and never count against the agent;
 * an agent that did not finish (error, limit, timeout) failed even if its files grade well.
 */
export function classifyTrial(evidence: TrialEvidence): TrialClassification {
  const { score, passed } = combineGrades(evidence.grades ?? []);
  if (evidence.harnessFailure) {
    return {
      outcome: "infrastructure_error",
      infraReason: evidence.harnessFailure.reason,
      score: null,
      gradePassed: null,
      explanation: `${evidence.harnessFailure.reason}: ${evidence.harnessFailure.message}`,
    };
  }
  if (evidence.trialFailure !== undefined)
    return {
      outcome: "failed",
      infraReason: null,
      score,
      gradePassed: false,
      explanation: evidence.trialFailure,
    };
  const receipt = evidence.receipt;
  if (!receipt)
    throw new Error("classifyTrial: a trial without a harness failure must have a receipt");
  if (receipt.status === "infra_error") {
    return {
      outcome: "infrastructure_error",
      infraReason: receipt.infraReason ?? "spawn_failed",
      score: null,
      gradePassed: null,
      explanation: `${receipt.infraReason ?? "spawn_failed"}: ${receipt.error ?? "the executor reported an infrastructure error"}`,
    };
  }
  if (receipt.status === "aborted") {
    return {
      outcome: "infrastructure_error",
      infraReason: "run_aborted",
      score: null,
      gradePassed: null,
      explanation: "the run was aborted before this trial finished",
    };
  }
  if (receipt.status !== "completed") {
    const ending = AGENT_ENDINGS[receipt.status] ?? receipt.status;
    return {
      outcome: "failed",
      infraReason: null,
      score,
      gradePassed: passed,
      explanation: `${ending}${receipt.error ? `: ${receipt.error}` : ""}`,
    };
  }
  if (passed === true) {
    return {
      outcome: "passed",
      infraReason: null,
      score,
      gradePassed: true,
      explanation: "all graders passed",
    };
  }
  const failing = failedChecks(evidence.grades ?? []);
  return {
    outcome: "failed",
    infraReason: null,
    score,
    gradePassed: passed,
    explanation:
      passed === null ? "the task has no graders" : `failed checks: ${failing.join(", ")}`,
  };
}

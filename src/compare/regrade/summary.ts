// What a regrade changed (pure): which trials moved and which way, how each variant's pass rate
// moved, and what `compare regrade` prints about it (the change lines are rendered by report).
import type { RegradeSummary, VerdictTrial } from "../../artifacts/index.js";
import { formatChangeLine, formatTrialChanges } from "../../report/index.js";

/**
 * `up`: passed after not passing, or the same outcome with a higher score; `down`: the reverse;
 * `other`: any other change (to or from an infrastructure error without a pass involved, or a
 * score appearing or disappearing).
 */
export type ChangeDirection = "up" | "down" | "other";

export type RegradeTrial = Pick<
  VerdictTrial,
  "artifactDir" | "variant" | "outcome" | "score" | "explanation"
>;

export type { RegradeSummary };
export type TrialChange = RegradeSummary["changes"][number];

export function changeDirection(
  before: Pick<RegradeTrial, "outcome" | "score">,
  after: Pick<RegradeTrial, "outcome" | "score">,
): ChangeDirection | null {
  if (before.outcome === after.outcome) {
    if (before.score === after.score) return null;
    if (before.score === null || after.score === null) return "other";
    return after.score > before.score ? "up" : "down";
  }
  if (after.outcome === "passed") return "up";
  if (before.outcome === "passed") return "down";
  return "other";
}

function passRate(trials: readonly RegradeTrial[], variant: string): number | null {
  const completed = trials.filter(
    (t) => t.variant === variant && t.outcome !== "infrastructure_error",
  );
  if (completed.length === 0) return null;
  return completed.filter((t) => t.outcome === "passed").length / completed.length;
}

/**
 * Compares the trials of two verdicts, matched by folder. `variants` lists every variant id;
 * `baseline` is listed first among the pass-rate changes.
 */
export function summarizeRegrade(input: {
  before: readonly RegradeTrial[];
  after: readonly RegradeTrial[];
  variants: readonly string[];
  baseline: string;
}): RegradeSummary {
  const previous = new Map(input.before.map((t) => [t.artifactDir, t]));
  const changes: TrialChange[] = [];
  for (const trial of input.after) {
    const old = previous.get(trial.artifactDir);
    if (!old) continue;
    const direction = changeDirection(old, trial);
    if (direction === null) continue;
    changes.push({
      artifactDir: trial.artifactDir,
      variant: trial.variant,
      direction,
      before: { outcome: old.outcome, score: old.score },
      after: { outcome: trial.outcome, score: trial.score, explanation: trial.explanation },
    });
  }
  const order = [input.baseline, ...input.variants.filter((v) => v !== input.baseline)];
  const rank = (variant: string) => {
    const i = order.indexOf(variant);
    return i < 0 ? order.length : i;
  };
  changes.sort(
    (a, b) =>
      rank(a.variant) - rank(b.variant) ||
      (a.artifactDir < b.artifactDir ? -1 : a.artifactDir > b.artifactDir ? 1 : 0),
  );
  const passRates = order
    .map((variant) => ({
      variant,
      before: passRate(input.before, variant),
      after: passRate(input.after, variant),
    }))
    .filter((r) => r.before !== r.after);
  const count = (d: ChangeDirection) => changes.filter((c) => c.direction === d).length;
  return { changes, up: count("up"), down: count("down"), other: count("other"), passRates };
}

/** A contract a grader was re-graded with. */
export interface RegradeContract {
  task: string;
  grader: string;
  /** Absolute path of the file read. */
  path: string;
  contractHash: string;
  source: "manifest" | "option";
  /** The hash the run graded with (frozen-task.json); null when the run recorded none. */
  runContractHash: string | null;
}

/** What `compare regrade` prints: notes, the contracts used, what changed, the old and new verdict. */
export function formatRegradeReport(report: {
  stem: string;
  notes: readonly string[];
  contracts: readonly RegradeContract[];
  summary: RegradeSummary;
  previous: { status: string; reason: string };
  verdict: { status: string; reason: string };
}): string[] {
  const contracts = report.contracts.map((c) => {
    const from = c.source === "option" ? "from --grader-contract" : "from the manifest";
    const vsRun =
      c.runContractHash === null
        ? "the run recorded no contract hash"
        : c.runContractHash === c.contractHash
          ? "same as the run"
          : `the run used ${c.runContractHash}`;
    return `grader contract ${c.task}/${c.grader}: ${c.path} ${c.contractHash} (${from}; ${vsRun})`;
  });
  return [
    ...report.notes.map((note) => `note: ${note}`),
    ...contracts,
    formatChangeLine(report.summary),
    ...formatTrialChanges(report.summary),
    `previous verdict: ${report.previous.status} — ${report.previous.reason}`,
    `new verdict (${report.stem}.json): ${report.verdict.status} — ${report.verdict.reason}`,
  ];
}

// Sequential stopping: stop running trials once their outcomes can no longer
// change the verdict.
import type {
  Comparison,
  StoppingDecision,
  StoppingOptions,
  TrialRecord,
  VerdictStatus,
} from "./contract.js";
import { plural } from "./format.js";
import { assumedTrial, layoutOf } from "./layout.js";
import { decideVerdict } from "./verdict.js";

type Scenario = "worst" | "best";

/**
 * The records plus every remaining planned trial, completed with the outcome that is worst (or
 * best) for the candidates: candidates fail with score 0 and the baseline passes with 100, or
 * the reverse. Costs and other measurements of unrun trials are unknown and stay null, so the
 * means measured so far carry over.
 */
function completeWith(
  trials: readonly TrialRecord[],
  options: StoppingOptions,
  scenario: Scenario,
): { trials: TrialRecord[]; remaining: number } {
  const layout = layoutOf(trials, options);
  const completed = [...trials];
  let remaining = 0;
  for (const variant of layout.variants)
    for (const task of layout.tasks) {
      const cell = layout.trialsOf(variant, task);
      const missing = Math.max(0, options.plannedTrials - cell.length);
      remaining += missing;
      const passes = (variant === options.baseline) === (scenario === "worst");
      const last = cell.reduce((max, t) => Math.max(max, t.trial), 0);
      for (let i = 1; i <= missing; i++)
        completed.push(assumedTrial({ variant, task, trial: last + i }, passes));
    }
  return { trials: completed, remaining };
}

/**
 * Whether the overall status is already settled: it is when the worst case for the candidates
 * and the best case give the same status. Both policies' statuses only move toward accept as a
 * candidate passes more (or the baseline less), so every other outcome of the remaining trials
 * lies between those two. Assumes the remaining trials complete; an infrastructure error
 * among them is not modelled. `best` (which accepted candidate ranks first) may still change.
 */
export function canStopEarly(
  trials: readonly TrialRecord[],
  options: StoppingOptions,
): StoppingDecision {
  if (!Number.isInteger(options.plannedTrials) || options.plannedTrials < 1)
    throw new RangeError(`plannedTrials must be a positive integer, got ${options.plannedTrials}`);
  if (options.policy.kind === "paired-v1" && options.policy.design === "sequential")
    return sequentialStop(trials, options);
  const worst = completeWith(trials, options, "worst");
  const best = completeWith(trials, options, "best");
  const worstCase = decideVerdict(worst.trials, options).status;
  const bestCase = decideVerdict(best.trials, options).status;
  const remaining = worst.remaining;
  const settled: VerdictStatus | null = worstCase === bestCase ? worstCase : null;
  let reason: string;
  if (remaining === 0) reason = `every planned trial is recorded; the verdict is ${worstCase}`;
  else if (settled !== null)
    reason = `the verdict is ${settled} whatever the ${plural(remaining, "remaining trial")} show (worst and best case agree)`;
  else
    reason = `the ${plural(remaining, "remaining trial")} can still change the verdict: ${worstCase} if the candidates fail them all, ${bestCase} if they pass them all`;
  return {
    canStop: settled !== null,
    status: settled,
    worstCase,
    bestCase,
    remainingTrials: remaining,
    reason,
  };
}

/**
 * The sequential design stops where its boundaries say: once every candidate's comparison has
 * crossed one (a crossing is final), or once one has been accepted (an accept decides the
 * verdict). Its error guarantee covers stopping there; it does not cover stopping anywhere else.
 */
function sequentialStop(
  trials: readonly TrialRecord[],
  options: StoppingOptions,
): StoppingDecision {
  const verdict = decideVerdict(trials, options);
  const remaining = completeWith(trials, options, "worst").remaining;
  const crossed = (c: Comparison) => (c.test?.sequential?.decidedAtPair ?? null) !== null;
  const accepted = verdict.comparisons.some((c) => crossed(c) && c.status === "accept");
  const settled =
    verdict.status !== "infrastructure_error" &&
    (remaining === 0 || accepted || verdict.comparisons.every(crossed));
  const reason =
    remaining === 0
      ? `every planned trial is recorded; the verdict is ${verdict.status}`
      : settled
        ? `the sequential design crossed its boundary: ${verdict.reason}`
        : `no boundary of the sequential design is crossed yet (${plural(remaining, "trial")} left)`;
  return {
    canStop: settled,
    status: settled ? verdict.status : null,
    worstCase: verdict.status,
    bestCase: verdict.status,
    remainingTrials: remaining,
    reason,
  };
}

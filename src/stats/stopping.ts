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
import { familyOf } from "./multiplicity.js";
import { SequentialMonitor } from "./sequential.js";
import { checkTrialRecords, decideVerdict } from "./verdict.js";

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
  checkTrialRecords(trials);
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
  // Final once the test crossed downward, or upward with its twin that counts infrastructure
  // errors as failures crossed too (upward: accept; downward: never accept). Upward alone is
  // not final: the twin may still cross upward at a later look.
  const crossed = (c: Comparison) => {
    const sequential = c.test?.sequential;
    if (sequential === null || sequential === undefined || sequential.decidedAtPair === null)
      return false;
    if (c.interval !== null && c.interval.upper < 0) return true;
    // (A verdict from before the twin was recorded has none: its crossing is final.)
    return sequential.infraAsFailure === undefined || sequential.infraAsFailure.decided !== null;
  };
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

/** One candidate's comparison as the watch follows it: its pairs in planned order and two tests. */
interface WatchedComparison {
  variant: string;
  planned: Array<{ task: string; trial: number }>;
  /** The first planned pair not yet complete. */
  next: number;
  /** The test that leaves infrastructure errors out, and its twin that counts them as failures. */
  primary: SequentialMonitor;
  twin: SequentialMonitor;
  final: boolean;
}

/**
 * Follows a sequential design as a run records its trials, feeding each completed pair to the
 * comparisons' tests once (never recomputing them), and says when the full stopping decision is
 * worth asking for: when a comparison reached a state more trials cannot change (crossed
 * downward, or upward with its twin crossed too), or every planned trial is in. Until then the
 * design cannot stop, so a run of thousands of trials decides in about the time its tests take
 * once. `record` returns true when `canStopEarly` should be asked.
 */
export function watchSequentialDesign(options: StoppingOptions): {
  record(trial: TrialRecord): boolean;
} {
  const { order, plannedTrials, policy, baseline } = options;
  if (order === undefined || policy.kind !== "paired-v1" || policy.design !== "sequential")
    throw new RangeError("watching a sequential design needs its planned order and policy");
  const variants = options.variants ?? [...new Set(order.map((t) => t.variant))];
  const tasks = options.tasks ?? [...new Set(order.map((t) => t.task))];
  const family = familyOf(policy.alpha, variants.length - 1);
  const key = (variant: string, task: string, trial: number) =>
    JSON.stringify([variant, task, trial]);
  const place = new Map(order.map((t, i) => [key(t.variant, t.task, t.trial), i]));
  const outcomes = new Map<string, TrialRecord["outcome"]>();
  const comparisons: WatchedComparison[] = variants
    .filter((variant) => variant !== baseline)
    .map((variant) => {
      const planned: Array<{ task: string; trial: number; position: number }> = [];
      for (const task of tasks)
        for (let trial = 1; trial <= plannedTrials; trial++)
          planned.push({
            task,
            trial,
            position: Math.max(
              place.get(key(variant, task, trial)) ?? Number.POSITIVE_INFINITY,
              place.get(key(baseline, task, trial)) ?? Number.POSITIVE_INFINITY,
            ),
          });
      planned.sort((a, b) => a.position - b.position);
      const side = family.comparisonAlpha / 2;
      return {
        variant,
        planned,
        next: 0,
        primary: new SequentialMonitor(planned.length, side),
        twin: new SequentialMonitor(planned.length, side),
        final: false,
      };
    });
  let recorded = 0;
  const total = order.length;
  return {
    record(trial) {
      const at = key(trial.variant, trial.task, trial.trial);
      if (!outcomes.has(at)) recorded += 1;
      outcomes.set(at, trial.outcome);
      let changed = false;
      for (const c of comparisons) {
        for (; c.next < c.planned.length; c.next += 1) {
          const { task, trial: index } = c.planned[c.next] as { task: string; trial: number };
          const mine = outcomes.get(key(c.variant, task, index));
          const theirs = outcomes.get(key(baseline, task, index));
          if (mine === undefined || theirs === undefined) break;
          const infra = mine === "infrastructure_error" || theirs === "infrastructure_error";
          const counted = {
            candidatePassed: mine === "passed",
            baselinePassed: theirs === "passed",
          };
          c.primary.push(infra ? null : counted);
          c.twin.push(counted);
        }
        const final =
          c.primary.crossed === "down" || (c.primary.crossed === "up" && c.twin.crossed !== null);
        if (final && !c.final) changed = true;
        c.final = final;
      }
      return changed || recorded >= total;
    },
  };
}

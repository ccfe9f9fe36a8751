// The `paired-v1` policy: a test of the task-matched pass-rate difference and the interval that
// agrees with it, under the fixed or the sequential design.
import {
  costChecks,
  describeInfraExclusion,
  describeMissing,
  describeTrialCounts,
  type PairStatistics,
} from "./comparison.js";
import type {
  CostCheck,
  DecisionTest,
  DifferenceInterval,
  PairedPolicy,
  SettleEstimate,
  VerdictStatus,
} from "./contract.js";
import { formatBound, formatLevel, formatP, formatRate, formatSigned, plural } from "./format.js";
import { describeAdjustment, type Family } from "./multiplicity.js";
import { trialsToSettle } from "./planning.js";

export interface PolicyDecision {
  status: VerdictStatus;
  reason: string;
  enoughTrials: boolean | null;
  costChecks: CostCheck[];
  /** need_more_work that more trials could settle: about how many. */
  toSettle?: SettleEstimate | null;
}

/**
 * About how many more trials would settle an open comparison, if the observed rates held: the
 * trials per cell the test needs for an 80 % chance of deciding (at least `minTrials` where
 * those are short, and always more than there are now), the trials still to run on the compared
 * tasks, and their cost at each variant's mean cost per trial so far.
 */
function settleEstimate(
  stats: PairStatistics,
  alpha: number,
  minTrials: number,
): SettleEstimate | null {
  const needed = trialsToSettle(stats.strata, alpha);
  if (needed === null) return null;
  const counts = stats.tasks.map((task) => {
    const i = stats.allTasks.indexOf(task);
    return {
      variant: stats.completedPerTask.variant[i] as number,
      baseline: stats.completedPerTask.baseline[i] as number,
    };
  });
  const most = Math.max(...counts.flatMap((c) => [c.variant, c.baseline]));
  const perCell = Math.max(needed, minTrials, most + 1);
  const more = (have: number) => Math.max(0, perCell - have);
  const moreVariant = counts.reduce((sum, c) => sum + more(c.variant), 0);
  const moreBaseline = counts.reduce((sum, c) => sum + more(c.baseline), 0);
  const { variant: costVariant, baseline: costBaseline } = stats.meanCostUsd;
  const known = [costVariant, costBaseline].filter((c): c is number => c !== null);
  const fallback = known.length === 0 ? null : known.reduce((a, b) => a + b, 0) / known.length;
  const moreCostUsd =
    fallback === null
      ? null
      : moreVariant * (costVariant ?? fallback) + moreBaseline * (costBaseline ?? fallback);
  return { trialsPerCell: perCell, moreTrials: moreVariant + moreBaseline, moreCostUsd };
}

/** "about 9 trials per cell (8 more trials, about $1.20) would likely settle it". */
function describeSettle(estimate: SettleEstimate | null): string {
  if (estimate === null) return "";
  const cost = estimate.moreCostUsd === null ? "" : `, about $${estimate.moreCostUsd.toFixed(2)}`;
  return `about ${estimate.trialsPerCell} completed trials per variant and task (${plural(estimate.moreTrials, "more trial")}${cost}) would likely settle it if the observed pass rates hold`;
}

interface ShortCell {
  variant: string;
  task: string;
  completed: number;
}

function shortCells(stats: PairStatistics, minTrials: number): ShortCell[] {
  const short: ShortCell[] = [];
  for (const [variant, counts] of [
    [stats.variant, stats.completedPerTask.variant],
    [stats.baseline, stats.completedPerTask.baseline],
  ] as const)
    stats.allTasks.forEach((task, i) => {
      const completed = counts[i] as number;
      if (completed < minTrials) short.push({ variant, task, completed });
    });
  return short;
}

function describeShort(short: readonly ShortCell[], minTrials: number): string {
  const shown = short
    .slice(0, 3)
    .map((s) => `${s.variant} has ${plural(s.completed, "completed trial")} on task ${s.task}`);
  if (short.length > 3) shown.push(`${short.length - 3} more`);
  return `${shown.join(", ")} (policy needs at least ${minTrials})`;
}

function describeInterval(interval: DifferenceInterval): string {
  const kind = interval.method === "sequential-sign" ? "repeated CI" : "CI";
  return `${formatLevel(interval.level)} ${kind} ${formatBound(interval.lower)} to ${formatBound(interval.upper)}`;
}

/** "p = 0.21" (fixed design), "p = 0.0004 ≤ 0.0021 at pair 57 of 200" (sequential). */
function describeTest(test: DecisionTest): string {
  const p = `p = ${formatP(test.pValue, test.threshold)}`;
  const sequential = test.sequential;
  if (sequential === null) return p;
  const relation = test.pValue <= test.threshold ? "≤" : ">";
  return `${p} ${relation} ${formatP(test.threshold, test.pValue)} at pair ${sequential.pairs} of ${sequential.plannedPairs}, ${plural(sequential.wins, "pair")} won and ${sequential.losses} lost`;
}

/**
 * Why the interval reaches 0 though the score test alone would exclude it: the exact
 * conditional test, which guards the error rate, does not. Empty otherwise.
 */
function describeExactGuard(test: DecisionTest, side: "upper" | "lower"): string {
  if (test.exact === null || test.score === null) return "";
  const half = test.threshold / 2;
  if (!(test.score[side] <= half && test.exact[side] > half)) return "";
  return `the score test alone would exclude 0, but the exact conditional test does not (one-sided p = ${formatP(test.exact[side], half)} > ${formatP(half, test.exact[side])})`;
}

/**
 * accept: the interval lies above 0, and also with infrastructure errors counted as failures,
 * both variants have at least `minTrials` completed trials on every task (fixed design only: the
 * sequential design's boundaries take its place), and no cost test failed. reject: the interval lies below 0. Otherwise need_more_work.
 * infrastructure_error: a variant has a task without any completed trial. The interval and its
 * test agree by construction (docs/statistics.md); under the fixed design `stats` must have been
 * computed at `family.comparisonAlpha`. Cost tests that were skipped are left to the verdict's
 * reason, which names each once.
 */
export function decidePaired(
  stats: PairStatistics,
  policy: PairedPolicy,
  family: Family,
): PolicyDecision {
  const checks = costChecks(stats, policy.maxCostRatio);
  const sequential = policy.design === "sequential";
  const short = sequential ? [] : shortCells(stats, policy.minTrials);
  const enoughTrials = short.length === 0;
  const { variant, baseline, interval, test } = stats;
  if (stats.missing.length > 0 || interval === null || stats.difference === null || test === null)
    return {
      status: "infrastructure_error",
      reason: `no completed trial for ${describeMissing(stats.missing)}, so ${variant} cannot be compared with ${baseline}`,
      enoughTrials,
      costChecks: checks,
    };

  if (test.design === "fixed" && interval.level !== 1 - family.comparisonAlpha)
    throw new RangeError(
      `the interval was computed at level ${interval.level}, not at the family's ${1 - family.comparisonAlpha}`,
    );
  const evidence = `pass rate ${formatRate(stats.passRate.variant.excludingInfra)} vs ${formatRate(
    stats.passRate.baseline.excludingInfra,
  )}, difference ${formatSigned(stats.difference)} (${describeInterval(interval)}, ${describeTest(test)}), ${describeTrialCounts(stats)}`;
  const design = sequential ? "sequential design" : "";
  const infraNote = describeInfraExclusion(stats);
  const costNotes = checks.filter((c) => c.status !== "skipped").map((c) => c.detail);
  // The adjustment qualifies the interval in the evidence, so it comes right after it.
  const join = (lead: string, notes: readonly string[]) =>
    [`${lead}: ${evidence}`, describeAdjustment(family), design, ...notes]
      .filter((n) => n !== "")
      .join("; ");
  const decision = (status: VerdictStatus, reason: string): PolicyDecision => ({
    status,
    reason,
    enoughTrials,
    costChecks: checks,
  });

  if (interval.upper < 0)
    return decision(
      "reject",
      join(`${variant} is worse than ${baseline} (the interval lies below 0)`, [infraNote]),
    );
  if (interval.lower > 0) {
    if (!enoughTrials) {
      const estimate = settleEstimate(stats, family.comparisonAlpha, policy.minTrials);
      return {
        ...decision(
          "need_more_work",
          join(`${variant} looks better than ${baseline} but has too few trials to accept`, [
            describeShort(short, policy.minTrials),
            infraNote,
            ...costNotes,
            describeSettle(estimate),
          ]),
        ),
        toSettle: estimate,
      };
    }
    // Infrastructure errors are left out of the interval, so a candidate whose failures were
    // recorded as infrastructure (its trials broke their own repository, say) would look better
    // than it is: it is accepted only if the difference also holds with them counted as failures.
    const withInfra = stats.infraAsFailure.interval;
    if (stats.infraErrors > 0 && (withInfra === null || withInfra.lower <= 0))
      return decision(
        "need_more_work",
        join(
          `${variant} looks better than ${baseline}, but not once its infrastructure errors count as failures`,
          [
            infraNote,
            withInfra === null
              ? ""
              : `with them counted as failures the ${describeInterval(withInfra)} reaches 0`,
            ...costNotes,
          ],
        ),
      );
    if (checks.some((c) => c.status === "failed"))
      return decision(
        "need_more_work",
        join(`${variant} is better than ${baseline} but costs too much`, [infraNote, ...costNotes]),
      );
    return decision(
      "accept",
      join(`${variant} is better than ${baseline} (the interval lies above 0)`, [
        infraNote,
        ...costNotes,
      ]),
    );
  }
  const open = sequential
    ? `${variant} is not clearly different from ${baseline} yet (no boundary of the sequential design crossed)`
    : `${variant} is not clearly different from ${baseline} (the interval includes 0)`;
  const estimate = settleEstimate(stats, family.comparisonAlpha, sequential ? 1 : policy.minTrials);
  return {
    ...decision(
      "need_more_work",
      join(open, [
        describeExactGuard(test, stats.difference >= 0 ? "upper" : "lower"),
        infraNote,
        enoughTrials
          ? ""
          : `more trials would narrow it: ${describeShort(short, policy.minTrials)}`,
        describeSettle(estimate),
      ]),
    ),
    toSettle: estimate,
  };
}

// The `paired-v1` policy: a confidence interval for the task-matched pass-rate difference.
import {
  costChecks,
  describeInfraExclusion,
  describeMissing,
  describeTrialCounts,
  type PairStatistics,
} from "./comparison.js";
import type { CostCheck, DifferenceInterval, PairedPolicy, VerdictStatus } from "./contract.js";
import { formatLevel, formatRate, formatSigned, plural } from "./format.js";
import { describeAdjustment, type Family } from "./multiplicity.js";

export interface PolicyDecision {
  status: VerdictStatus;
  reason: string;
  enoughTrials: boolean | null;
  costChecks: CostCheck[];
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
  return `${formatLevel(interval.level)} CI ${formatSigned(interval.lower)} to ${formatSigned(interval.upper)}`;
}

/**
 * accept: the interval lies above 0, both variants have at least `minTrials` completed trials
 * on every task, and no cost test failed. reject: the interval lies below 0. Otherwise
 * need_more_work. infrastructure_error: a variant has a task without any completed trial.
 * `stats` must have been computed at `family.comparisonAlpha`; with several candidates the
 * reason says the level was adjusted.
 */
export function decidePaired(
  stats: PairStatistics,
  policy: PairedPolicy,
  family: Family,
): PolicyDecision {
  const checks = costChecks(stats, policy.maxCostRatio);
  const short = shortCells(stats, policy.minTrials);
  const enoughTrials = short.length === 0;
  if (stats.missing.length > 0 || stats.interval === null || stats.difference === null)
    return {
      status: "infrastructure_error",
      reason: `no completed trial for ${describeMissing(stats.missing)}, so ${stats.variant} cannot be compared with ${stats.baseline}`,
      enoughTrials,
      costChecks: checks,
    };

  const { variant, baseline, interval } = stats;
  if (interval.level !== 1 - family.comparisonAlpha)
    throw new RangeError(
      `the interval was computed at level ${interval.level}, not at the family's ${1 - family.comparisonAlpha}`,
    );
  const evidence = `pass rate ${formatRate(stats.passRate.variant.excludingInfra)} vs ${formatRate(
    stats.passRate.baseline.excludingInfra,
  )}, difference ${formatSigned(stats.difference)} (${describeInterval(interval)}), ${describeTrialCounts(stats)}`;
  const infraNote = describeInfraExclusion(stats);
  const costNotes = checks.map((c) => c.detail);
  // The adjustment qualifies the interval in the evidence, so it comes right after it.
  const join = (lead: string, notes: readonly string[]) =>
    [`${lead}: ${evidence}`, describeAdjustment(family), ...notes]
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
    if (!enoughTrials)
      return decision(
        "need_more_work",
        join(`${variant} looks better than ${baseline} but has too few trials to accept`, [
          describeShort(short, policy.minTrials),
          infraNote,
          ...costNotes,
        ]),
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
  return decision(
    "need_more_work",
    join(`${variant} is not clearly different from ${baseline} (the interval includes 0)`, [
      infraNote,
      enoughTrials ? "" : `more trials would narrow it: ${describeShort(short, policy.minTrials)}`,
    ]),
  );
}

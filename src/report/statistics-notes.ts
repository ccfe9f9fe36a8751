// What both reports say about how the verdict was decided, as plain sentences each renderer
// escapes its own way: the test behind each comparison, the design that decided, a budget that
// stopped the run, an A/A calibration, and (for verdicts written before the exact test decided, which
// decided with an interval alone) where that interval and the exact test disagree.
import type { VerdictDocument } from "../artifacts/index.js";
import { formatP, plural } from "../stats/index.js";
import { levelPercent, signedPoints, usd } from "./format.js";

type Comparison = NonNullable<VerdictDocument["statistics"]>["comparisons"][number];

/** The p-value shown for a comparison and what it comes from. */
export function comparisonP(c: Comparison): { p: string; source: string } {
  if (c.test)
    return {
      p: formatP(c.test.pValue, c.test.threshold),
      source:
        c.test.design === "sequential"
          ? `sequential test, boundary ${formatP(c.test.threshold, c.test.pValue)}`
          : `exact conditional and score tests, level ${formatP(c.test.threshold, c.test.pValue)}`,
    };
  if (c.exactPValue === null) return { p: "—", source: "" };
  return {
    p: formatP(c.exactPValue, c.interval === null ? 0.05 : 1 - c.interval.level),
    source: c.exactTestMethod ?? "",
  };
}

/**
 * Verdicts written before the exact test decided were decided by an interval, and the exact test printed
 * beside it could say otherwise; one sentence per comparison where it did. Empty for verdicts
 * whose comparisons carry their deciding test: those never disagree.
 */
export function disagreementNotes(verdict: VerdictDocument): string[] {
  const stats = verdict.statistics;
  if (!stats) return [];
  return stats.comparisons.flatMap((c) => {
    if (c.test || c.interval === null || c.exactPValue === null) return [];
    const alpha = 1 - c.interval.level;
    const intervalSays = c.interval.lower > 0 || c.interval.upper < 0;
    const testSays = c.exactPValue <= alpha;
    if (intervalSays === testSays) return [];
    const interval = `the ${levelPercent(c.interval.level)}% interval (${c.interval.method}) ${
      intervalSays ? `lies ${c.interval.lower > 0 ? "above" : "below"} 0` : "includes 0"
    }`;
    const test = `the exact test's p = ${formatP(c.exactPValue, alpha)} is ${testSays ? "≤" : ">"} ${formatP(alpha, c.exactPValue)}`;
    return [
      `For ${c.variant} the interval and the exact test disagree: ${interval}, but ${test}. This verdict was decided by the interval, a method harnesslab no longer uses; \`harness compare regrade\` decides it again with the current one, whose interval and test always agree.`,
    ];
  });
}

/** Which design decided and, for the sequential one, where each comparison stood. */
export function designNote(verdict: VerdictDocument): string | null {
  const stats = verdict.statistics;
  if (!stats) return null;
  const sequential = stats.comparisons.filter((c) => c.test?.design === "sequential");
  if (sequential.length === 0) return null;
  const parts = sequential.map((c) => {
    const s = c.test?.sequential;
    if (!s) return "";
    if (s.decidedAtPair === null)
      return `${c.variant} crossed no boundary in ${plural(s.pairs, "pair")} of ${s.plannedPairs}`;
    return `${c.variant} crossed its boundary at pair ${s.decidedAtPair} of ${s.plannedPairs}${
      s.decidedAfterTrials === null ? "" : `, after ${s.decidedAfterTrials} planned trials`
    }`;
  });
  return `Decided by the sequential design (pairs of trials looked at in planned order, O'Brien–Fleming error spending): ${parts.filter((p) => p !== "").join("; ")}. Its interval is a repeated confidence interval at the deciding look's level.`;
}

/** Null unless a budget stopped the run. */
export function budgetNote(verdict: VerdictDocument): string | null {
  const stop = verdict.budgetStop;
  if (!stop) return null;
  const amount = (x: number) =>
    stop.limit === "max-cost-usd" ? usd(x) : `${Math.round(x)} tokens`;
  return `The budget decided when to stop: --${stop.limit} ${stop.limit === "max-cost-usd" ? usd(stop.value) : stop.value} was reached after ${stop.trialsRun} of ${stop.trialsPlanned} planned trials (${amount(stop.spent)} used; the largest trial used ${amount(stop.largestTrial)}, so the next one could have gone over). The verdict judges the trials that ran.`;
}

/** Null unless this is an A/A run. */
export function calibrationNote(verdict: VerdictDocument): string | null {
  const c = verdict.calibration;
  if (!c) return null;
  const comparison = verdict.statistics?.comparisons[0];
  const observed =
    comparison?.interval && comparison.difference !== null
      ? ` The observed difference is ${signedPoints(comparison.difference)} (${levelPercent(comparison.interval.level)}% CI ${signedPoints(comparison.interval.lower)} to ${signedPoints(comparison.interval.upper)}): differences smaller than this interval's half-width are within this setup's noise.`
      : "";
  const promise =
    c.nominal === null
      ? "heuristic-v1 makes no promise"
      : `the policy promises at most ${(100 * c.nominal).toFixed(1)}%`;
  return `A/A calibration: ${c.variant} compared with a copy of itself (${c.copy}), so every difference is noise. Over ${c.resplits} random re-splits of these trials the policy claimed a difference in ${(100 * c.claimRate).toFixed(1)}% (${c.accepts} accept, ${c.rejects} reject); ${promise}.${observed}`;
}

/** Null unless a regrade re-decided a verdict whose method harnesslab no longer uses. */
export function methodChangeNote(verdict: VerdictDocument): string | null {
  const change = verdict.regradeSummary?.methodChange;
  if (!change) return null;
  return `The statistical method changed since the run: it was decided by ${change.previousMethod} (an interval alone) as ${change.previousStatus}; on the run's own grades the current method decides ${change.statusWithPreviousGrades}. This verdict uses the current method.`;
}

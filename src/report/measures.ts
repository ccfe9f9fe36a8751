// The measurements a report table shows for a variant or a variant × task cell, as display text
// shared by verdict.md and verdict.html (each escapes it its own way), so both say the same.
import type { CellAggregate, PassAtKPoint, VariantAggregate } from "../stats/index.js";
import { meanCostText } from "./cost.js";
import { duration, num, percent, rateInterval, tokenCount } from "./format.js";

type Aggregate = VariantAggregate | CellAggregate;

export interface MeasureTexts {
  /** `1 / 5` */
  passedOfCompleted: string;
  /** Pass rate over completed trials, `20%`. */
  passRate: string;
  /** Its 95% Wilson interval, `[4%–62%]`; why there is no rate when there is none; empty without data. */
  interval: string;
  /** The pass rate with infrastructure errors counted as failures, only when there were any. */
  infraAsFailure: string | null;
  infraErrors: string;
  meanScore: string;
  passAt1: string;
  /** pass@k and pass^k at the largest k, `k=5: 100% · 0%`. */
  passAtLargestK: string;
  meanCost: string;
  /** Mean tokens per completed trial: input (cache included) / output. */
  tokens: string;
  turns: string;
  duration: string;
}

export const MEASURE_HEADERS = {
  passedOfCompleted: "passed / completed",
  passRate: "pass rate [95% CI]",
  infraErrors: "infra errors",
  meanScore: "mean score",
  passAt1: "pass@1",
  passAtLargestK: "pass@k · pass^k (largest k)",
  meanCost: "mean cost",
  tokens: "tokens in / out",
  turns: "turns",
  duration: "duration",
} as const;

function largestK(curve: readonly PassAtKPoint[]): PassAtKPoint | undefined {
  return curve[curve.length - 1];
}

export function measureTexts(agg: Aggregate | undefined): MeasureTexts {
  if (agg === undefined) {
    return {
      passedOfCompleted: "—",
      passRate: "—",
      interval: "",
      infraAsFailure: null,
      infraErrors: "—",
      meanScore: "—",
      passAt1: "—",
      passAtLargestK: "—",
      meanCost: "—",
      tokens: "—",
      turns: "—",
      duration: "—",
    };
  }
  const curve = agg.passAtK.excludingInfra;
  const first = curve.find((p) => p.k === 1);
  const last = largestK(curve);
  const tokens = agg.tokens?.meanPerCompletedTrial ?? null;
  return {
    passedOfCompleted: `${agg.passed} / ${agg.completed}`,
    passRate: percent(agg.passRate.excludingInfra),
    // "— —" would leave a reader guessing: with no completed trial there is nothing to rate.
    interval: agg.completed === 0 ? "(no completed trial)" : rateInterval(agg.passRateInterval),
    infraAsFailure: agg.infraErrors > 0 ? percent(agg.passRate.infraAsFailure) : null,
    infraErrors: String(agg.infraErrors),
    meanScore: num(agg.meanScore),
    passAt1: percent(first?.passAtK),
    passAtLargestK: last
      ? `k=${last.k}: ${percent(last.passAtK)} · ${percent(last.passHatK)}`
      : "—",
    meanCost: meanCostText(agg),
    tokens: tokens
      ? `${tokenCount(tokens.uncachedInput + tokens.cacheRead + tokens.cacheWrite)} / ${tokenCount(tokens.output)}`
      : "—",
    turns: num(agg.meanTurns),
    duration: duration(agg.duration?.meanMs),
  };
}

/**
 * The k values worth a column in the pass@k table: 1, 2, 3, 5, 10, 20, 50, 100, … and each
 * variant's largest k (where its curve ends).
 */
export function passAtKColumns(variants: readonly VariantAggregate[]): number[] {
  const ends = variants.flatMap((v) => {
    const last = largestK(v.passAtK.excludingInfra);
    return last ? [last.k] : [];
  });
  const maxK = Math.max(0, ...ends);
  const ks = new Set<number>(ends);
  for (const k of [1, 2, 3, 5]) if (k <= maxK) ks.add(k);
  for (let decade = 10; decade <= maxK; decade *= 10)
    for (const k of [decade, decade * 2, decade * 5]) if (k <= maxK) ks.add(k);
  return [...ks].sort((a, b) => a - b);
}

/** `pass@k · pass^k` at one k, or `—` when the variant has too few trials for it. */
export function passAtKText(agg: VariantAggregate | undefined, k: number): string {
  const point = agg?.passAtK.excludingInfra.find((p) => p.k === k);
  return point ? `${percent(point.passAtK)} · ${percent(point.passHatK)}` : "—";
}

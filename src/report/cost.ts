// Cost where hosts report it differently: per variant, the host and model it ran on, its mean
// cost (as reported, or estimated at list prices), what the run spent on it and whether a USD
// budget could count it; and the points of the pass-rate-against-cost plot. Display text and
// numbers only, shared by verdict.md and verdict.html (each escapes it its own way).
import type { VerdictDocument } from "../artifacts/index.js";
import type { Comparison, RateInterval, VariantAggregate } from "../stats/index.js";
import { num, percent, usd } from "./format.js";

type Variant = VerdictDocument["variants"][number];

function aggregateOf(verdict: VerdictDocument, id: string): VariantAggregate | undefined {
  return verdict.statistics?.aggregates.variants.find((v) => v.variant === id);
}

/** `claude-code · claude-sonnet-4-5`; the run's host for a verdict written before variants had their own. */
export function hostModelText(verdict: VerdictDocument, variant: Variant): string {
  const host = variant.host ?? verdict.host;
  return variant.model ? `${host} · ${variant.model}` : host;
}

/** The hosts the variants ran on, each once. */
export function runHosts(verdict: VerdictDocument): string[] {
  return [...new Set(verdict.variants.map((v) => v.host ?? verdict.host))];
}

/** Mean cost per completed trial: reported USD, else `≈$0.0123 est.` from tokens, else `—`. */
export function meanCostText(
  agg: Pick<VariantAggregate, "costUsd" | "usdWithEstimates"> | undefined,
): string {
  const reported = agg?.costUsd?.meanPerCompletedTrial;
  if (reported !== null && reported !== undefined) return usd(reported);
  const estimated = agg?.usdWithEstimates?.meanPerCompletedTrial;
  if (estimated !== null && estimated !== undefined) return `≈${usd(estimated)} est.`;
  return "—";
}

/** A comparison's mean costs and ratio: reported USD, else USD with estimates (marked ≈). */
export function comparisonCostTexts(c: Comparison): { means: string; ratio: string } {
  if (c.meanCostUsd.variant !== null && c.meanCostUsd.baseline !== null)
    return {
      means: `${usd(c.meanCostUsd.variant)} vs ${usd(c.meanCostUsd.baseline)}`,
      ratio: c.costRatio.usd === null ? "—" : `${num(c.costRatio.usd, 2)}×`,
    };
  const estimated = c.meanUsdWithEstimates;
  if (estimated?.variant != null && estimated.baseline != null)
    return {
      means: `≈${usd(estimated.variant)} vs ≈${usd(estimated.baseline)}`,
      ratio:
        c.costRatio.usdWithEstimates == null ? "—" : `≈${num(c.costRatio.usdWithEstimates, 2)}×`,
    };
  return {
    means: `${usd(c.meanCostUsd.variant)} vs ${usd(c.meanCostUsd.baseline)}`,
    ratio: "not comparable",
  };
}

export const SPEND_HEADERS = [
  "variant",
  "host · model",
  "USD reported",
  "share of the run's USD",
  "budget",
] as const;

/**
 * Per variant: the USD its trials reported, its share of what the run reported, and whether
 * --max-cost-usd could count it (a host that reports no USD is unbudgeted). Null when no trial
 * reported or estimated any cost.
 */
export function spendRows(verdict: VerdictDocument): string[][] | null {
  const aggs = verdict.variants.map((v) => aggregateOf(verdict, v.id));
  if (aggs.every((a) => a?.costUsd == null && a?.usdWithEstimates == null)) return null;
  const runTotal = aggs.reduce((sum, a) => sum + (a?.costUsd?.total ?? 0), 0);
  return verdict.variants.map((variant, index) => {
    const agg = aggs[index];
    const reported = agg?.costUsd?.total ?? null;
    const estimated = agg?.usdWithEstimates?.total ?? null;
    const budget =
      reported !== null
        ? "counted by --max-cost-usd"
        : `unbudgeted: its host reports no USD${estimated === null ? "" : ` (≈${usd(estimated)} at list prices)`}`;
    return [
      variant.id,
      hostModelText(verdict, variant),
      reported === null ? "—" : usd(reported),
      reported === null || runTotal === 0 ? "—" : percent(reported / runTotal),
      budget,
    ];
  });
}

/** How the verdict's cost tests compared the variants, in one sentence; null without comparisons. */
export function costBasisNote(verdict: VerdictDocument): string | null {
  const comparisons = verdict.statistics?.comparisons ?? [];
  if (comparisons.length === 0) return null;
  const used = new Set(
    comparisons.flatMap((c) =>
      c.costChecks.filter((k) => k.status !== "skipped").map((k) => k.currency),
    ),
  );
  if (used.has("usd-estimated"))
    return "Cost is compared in USD with list-price estimates from tokens for the trials whose host reported no USD (docs/statistics.md#cost); a reported amount is always used as reported.";
  if (used.has("usd") || used.has("credits"))
    return `Cost is compared as the hosts reported it (${[...used].map((c) => (c === "usd" ? "USD" : c)).join(", ")}).`;
  return "Cost is not comparable here: the variants report no common currency and no list price covers their models.";
}

/** One variant's point on the pass-rate-against-cost plot. */
export interface CostPoint {
  variant: string;
  isBaseline: boolean;
  label: string;
  /** Mean USD per completed trial (reported, or with estimates when `estimated`). */
  cost: number;
  passRate: number;
  interval: RateInterval | null;
  /** On the frontier: no other variant costs less or the same and passes more or as often (one strictly). */
  frontier: boolean;
}

/**
 * The plot's points and its cost basis: reported USD when every variant has it, USD with
 * estimates when every variant has that; variants without a pass rate or a cost are left out
 * and named.
 */
export function costPoints(verdict: VerdictDocument): {
  points: CostPoint[];
  basis: "reported" | "estimated";
  missing: string[];
} {
  const entries = verdict.variants.map((variant) => ({
    variant,
    agg: aggregateOf(verdict, variant.id),
  }));
  const allReported = entries.every((e) => e.agg?.costUsd?.meanPerCompletedTrial != null);
  const basis = allReported ? "reported" : "estimated";
  const points: CostPoint[] = [];
  const missing: string[] = [];
  for (const { variant, agg } of entries) {
    const cost = allReported
      ? agg?.costUsd?.meanPerCompletedTrial
      : agg?.usdWithEstimates?.meanPerCompletedTrial;
    const rate = agg?.passRate.excludingInfra;
    if (cost === null || cost === undefined || rate === null || rate === undefined) {
      missing.push(variant.id);
      continue;
    }
    points.push({
      variant: variant.id,
      isBaseline: variant.isBaseline,
      label: hostModelText(verdict, variant),
      cost,
      passRate: rate,
      interval: agg?.passRateInterval ?? null,
      frontier: false,
    });
  }
  for (const point of points)
    point.frontier = !points.some(
      (other) =>
        other !== point &&
        other.cost <= point.cost &&
        other.passRate >= point.passRate &&
        (other.cost < point.cost || other.passRate > point.passRate),
    );
  return { points, basis, missing };
}

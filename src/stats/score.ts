// The stratified Miettinen–Nurminen score test and interval for a difference of pass rates,
// every task weighing the same. Formulas and sources: docs/statistics.md.
import type { Tails } from "./exact.js";
import { assertAlpha, assertCounts, criticalValue, type TwoByTwo } from "./intervals.js";
import { normalUpperTail } from "./normal.js";

/**
 * The maximum-likelihood pass rates of one task's two groups under the constraint
 * p1 − p0 = delta (the closed-form root of the likelihood equations' cubic given by Miettinen
 * and Nurminen 1985 and Farrington and Manning 1990).
 */
function restrictedRates(table: TwoByTwo, delta: number): { p1: number; p0: number } {
  const { successes1, trials1, successes0, trials0 } = table;
  const r1 = successes1 / trials1;
  const r0 = successes0 / trials0;
  const theta = trials0 / trials1;
  const a = 1 + theta;
  const b = -(1 + theta + r1 + theta * r0 + delta * (theta + 2));
  const c = delta * delta + delta * (2 * r1 + theta + 1) + r1 + theta * r0;
  const d = -r1 * delta * (1 + delta);
  const v = b ** 3 / (27 * a ** 3) - (b * c) / (6 * a * a) + d / (2 * a);
  const s = Math.sqrt(Math.max(0, (b * b) / (9 * a * a) - c / (3 * a)));
  const u = v < 0 ? -s : s;
  // u = 0 only when the cubic has a triple root; clamping keeps acos inside its domain where
  // rounding pushes the ratio a hair past ±1.
  const ratio = u === 0 ? 0 : Math.max(-1, Math.min(1, v / u ** 3));
  const w = (Math.PI + Math.acos(ratio)) / 3;
  const p1 = clamp(2 * u * Math.cos(w) - b / (3 * a), Math.max(0, delta), Math.min(1, 1 + delta));
  return { p1, p0: clamp(p1 - delta, 0, 1) };
}

function clamp(x: number, low: number, high: number): number {
  return Math.min(high, Math.max(low, x));
}

/** Equal-weight difference D = mean over tasks of (p1 − p0), the estimand. */
function equalWeightDifference(strata: readonly TwoByTwo[]): number {
  return (
    strata.reduce((sum, t) => sum + t.successes1 / t.trials1 - t.successes0 / t.trials0, 0) /
    strata.length
  );
}

/**
 * The score statistic for "D = delta": (D̂ − delta) / √(Σ w² Ṽₜ(delta)), with w = 1/T and Ṽₜ the
 * variance of task t's difference at its restricted rates, times Nₜ/(Nₜ − 1) (Miettinen and
 * Nurminen's correction, which makes the statistic at delta = 0 the exact test's standardised
 * statistic). A zero variance (every restricted rate at 0 or 1) gives 0, +∞ or −∞.
 */
export function scoreStatistic(strata: readonly TwoByTwo[], delta: number): number {
  const estimate = equalWeightDifference(strata);
  const weight = 1 / strata.length;
  let variance = 0;
  for (const table of strata) {
    const { p1, p0 } = restrictedRates(table, delta);
    const total = table.trials1 + table.trials0;
    variance +=
      weight *
      weight *
      ((p1 * (1 - p1)) / table.trials1 + (p0 * (1 - p0)) / table.trials0) *
      (total / (total - 1));
  }
  const gap = estimate - delta;
  if (variance > 0) return gap / Math.sqrt(variance);
  return gap === 0 ? 0 : gap > 0 ? Infinity : -Infinity;
}

function checkStrata(strata: readonly TwoByTwo[]): void {
  if (strata.length === 0) throw new RangeError("the score test needs at least one task");
  for (const table of strata) {
    assertCounts(table.successes1, table.trials1);
    assertCounts(table.successes0, table.trials0);
    if (table.trials1 === 0 || table.trials0 === 0)
      throw new RangeError("every stratum needs at least one trial in each group");
  }
}

/** One-sided p-values of the score test of D = 0: upper for "D > 0", lower for "D < 0". */
export function scoreTails(strata: readonly TwoByTwo[]): Tails {
  checkStrata(strata);
  const z = scoreStatistic(strata, 0);
  return { upper: normalUpperTail(z), lower: normalUpperTail(-z) };
}

/** Limits are found to within this (far below any difference a report shows). */
const TOLERANCE = 1e-10;

/**
 * The limit where the score statistic crosses `target`, searched between `from` (on the
 * rejected side) and `to` (not rejected): the statistic falls as delta rises.
 */
function crossing(strata: readonly TwoByTwo[], target: number, from: number, to: number): number {
  let rejected = from;
  let kept = to;
  const rejects = (delta: number) => {
    const z = scoreStatistic(strata, delta);
    return target > 0 ? z > target : z < target;
  };
  while (Math.abs(kept - rejected) > TOLERANCE) {
    const middle = (rejected + kept) / 2;
    if (rejects(middle)) rejected = middle;
    else kept = middle;
  }
  return (rejected + kept) / 2;
}

/** Which side of 0 a two-sided decision put the difference on. */
export interface ZeroDecision {
  /** The lower limit must lie above 0 (the difference was shown to be positive). */
  lowerAboveZero: boolean;
  /** The upper limit must lie below 0. */
  upperBelowZero: boolean;
}

/**
 * The score interval at level 1 − alpha (the differences the two-sided score test does not
 * reject), kept on the side of 0 that `decided` gives. A limit the score test alone would put
 * beyond 0 is set to 0 when the decision does not exclude 0 (another test it combines with did
 * not reject), and the search for a limit on the decided side never ends on the wrong side of 0
 * by rounding: interval and decision always agree.
 */
export function scoreInterval(
  strata: readonly TwoByTwo[],
  alpha: number,
  decided: ZeroDecision,
): { estimate: number; lower: number; upper: number } {
  checkStrata(strata);
  assertAlpha(alpha);
  const z = criticalValue(alpha);
  const estimate = equalWeightDifference(strata);
  const atZero = scoreStatistic(strata, 0);
  let lower: number;
  if (estimate <= -1) lower = -1;
  else if (decided.lowerAboveZero)
    lower = Math.max(crossing(strata, z, 0, estimate), Number.MIN_VALUE);
  else if (atZero > z) lower = 0;
  else lower = Math.min(crossing(strata, z, -1, Math.min(estimate, 0)), 0);
  let upper: number;
  if (estimate >= 1) upper = 1;
  else if (decided.upperBelowZero)
    upper = Math.min(crossing(strata, -z, 0, estimate), -Number.MIN_VALUE);
  else if (atZero < -z) upper = 0;
  else upper = Math.max(crossing(strata, -z, 1, Math.max(estimate, 0)), 0);
  return { estimate, lower, upper };
}

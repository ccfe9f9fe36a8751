// Binomial tail probabilities and the Clopper–Pearson limits that invert them, for the
// sequential design's sign walk (docs/statistics.md). Exact sums in log space: no factorial is
// formed, so nothing overflows at thousands of trials.
import { assertCounts } from "./intervals.js";

/** log(k!) for k = 0, 1, …, grown on demand (sums of logs: exact to rounding, no approximation). */
const logFactorials: number[] = [0];

function logFactorial(k: number): number {
  for (let i = logFactorials.length; i <= k; i++)
    logFactorials.push((logFactorials[i - 1] as number) + Math.log(i));
  return logFactorials[k] as number;
}

/** log C(n, k). */
function logChoose(n: number, k: number): number {
  return logFactorial(n) - logFactorial(k) - logFactorial(n - k);
}

function logSumExp(values: readonly number[]): number {
  const top = Math.max(...values);
  if (top === -Infinity) return -Infinity;
  return top + Math.log(values.reduce((sum, v) => sum + Math.exp(v - top), 0));
}

/** log P(X = k) for X ~ Binomial(n, p), with 0·log 0 = 0 at p ∈ {0, 1}. */
function logPoint(n: number, k: number, p: number): number {
  const hits = k === 0 ? 0 : k * Math.log(p);
  const misses = n - k === 0 ? 0 : (n - k) * Math.log1p(-p);
  return logChoose(n, k) + hits + misses;
}

/** P(X ≥ k) for X ~ Binomial(n, p). */
export function binomialUpperTail(n: number, k: number, p: number): number {
  if (!Number.isInteger(n) || n < 0 || !Number.isInteger(k))
    throw new RangeError(`binomial tail needs whole numbers, got n = ${n}, k = ${k}`);
  if (k <= 0) return 1;
  if (k > n) return 0;
  const terms: number[] = [];
  for (let i = k; i <= n; i++) terms.push(logPoint(n, i, p));
  return Math.min(1, Math.exp(logSumExp(terms)));
}

/** P(X ≤ k) for X ~ Binomial(n, p). */
export function binomialLowerTail(n: number, k: number, p: number): number {
  return binomialUpperTail(n, n - k, 1 - p);
}

/** Limits are found to within this (far below any difference a report shows). */
const TOLERANCE = 1e-12;

/** The smallest double above `x`. */
function nextAbove(x: number): number {
  if (x === 0) return Number.MIN_VALUE;
  const buffer = new Float64Array([x]);
  const bits = new BigInt64Array(buffer.buffer);
  bits[0] = (bits[0] as bigint) + (x > 0 ? 1n : -1n);
  return buffer[0] as number;
}

/**
 * Clopper–Pearson lower limit for a binomial proportion from `successes` of `trials` at
 * one-sided level `tailAlpha`: the p with P(X ≥ successes | p) = tailAlpha, the exact inversion
 * of the one-sided binomial test. It is searched on the side of `pivot` that the test at `pivot`
 * decides (above it when P(X ≥ successes | pivot) ≤ tailAlpha), so the limit lies above `pivot`
 * exactly when that test rejects p ≤ pivot, even where bisection ends within rounding of it.
 * With tailAlpha = 0 nothing is rejected: the limit is 0.
 */
export function clopperPearsonLower(
  successes: number,
  trials: number,
  tailAlpha: number,
  pivot = 0,
): number {
  assertCounts(successes, trials);
  if (!(tailAlpha >= 0 && tailAlpha < 1))
    throw new RangeError(`tailAlpha must be in [0, 1), got ${tailAlpha}`);
  if (successes === 0 || tailAlpha === 0) return 0;
  const tail = (p: number) => binomialUpperTail(trials, successes, p);
  const rejectsPivot = tail(pivot) <= tailAlpha;
  let low = rejectsPivot ? pivot : 0;
  let high = rejectsPivot ? 1 : pivot;
  while (high - low > TOLERANCE) {
    const middle = (low + high) / 2;
    if (tail(middle) <= tailAlpha) low = middle;
    else high = middle;
  }
  // `low` is rejected, `high` is not: the limit is the boundary between them, and it stays on
  // the pivot's decided side.
  return rejectsPivot ? Math.max(nextAbove(pivot), high) : (low + high) / 2;
}

/** Clopper–Pearson upper limit: the mirror image of the lower one (P(X ≤ successes | p) = tailAlpha). */
export function clopperPearsonUpper(
  successes: number,
  trials: number,
  tailAlpha: number,
  pivot = 1,
): number {
  return 1 - clopperPearsonLower(trials - successes, trials, tailAlpha, 1 - pivot);
}

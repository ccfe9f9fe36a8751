// Unbiased estimators of pass@k (at least one of k attempts passes; Chen et al. 2021) and
// pass^k (all k attempts pass; Yao et al. 2024) from n attempts of which c passed.
import type { PassAtKPoint } from "./contract.js";
import { assertCounts } from "./intervals.js";

function assertK(trials: number, k: number): void {
  if (!Number.isInteger(k) || k < 1 || k > trials)
    throw new RangeError(`k must be an integer in [1, ${trials}], got ${k}`);
}

/** 1 − C(n−c, k) / C(n, k), as a product so that no binomial coefficient is ever formed. */
export function passAtK(trials: number, passed: number, k: number): number {
  assertCounts(passed, trials);
  assertK(trials, k);
  if (trials - passed < k) return 1;
  // C(n−c,k)/C(n,k) = Π_{i=n−c+1..n} (1 − k/i)
  let allFail = 1;
  for (let i = trials - passed + 1; i <= trials; i++) allFail *= 1 - k / i;
  return 1 - allFail;
}

/** C(c, k) / C(n, k) = Π_{i=0..k−1} (c−i)/(n−i). */
export function passHatK(trials: number, passed: number, k: number): number {
  assertCounts(passed, trials);
  assertK(trials, k);
  if (passed < k) return 0;
  let allPass = 1;
  for (let i = 0; i < k; i++) allPass *= (passed - i) / (trials - i);
  return allPass;
}

/** pass@k and pass^k for k = 1..n (empty when n = 0). */
export function passAtKCurve(trials: number, passed: number): PassAtKPoint[] {
  assertCounts(passed, trials);
  const curve: PassAtKPoint[] = [];
  for (let k = 1; k <= trials; k++)
    curve.push({ k, passAtK: passAtK(trials, passed, k), passHatK: passHatK(trials, passed, k) });
  return curve;
}

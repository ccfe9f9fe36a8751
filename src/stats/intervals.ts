// Confidence intervals for a pass rate and for the difference of two pass rates.
// Formulas and sources: docs/statistics.md.
import { normalQuantile } from "./normal.js";

/** A point estimate with a two-sided interval; `estimate` is null when there is no data. */
export interface IntervalEstimate {
  estimate: number | null;
  lower: number;
  upper: number;
}

/** Successes and trials of two independent groups: 1 = candidate, 0 = baseline. */
export interface TwoByTwo {
  successes1: number;
  trials1: number;
  successes0: number;
  trials0: number;
}

export function assertAlpha(alpha: number): void {
  if (!(alpha > 0 && alpha < 1)) throw new RangeError(`alpha must be in (0, 1), got ${alpha}`);
}

export function assertCounts(successes: number, trials: number): void {
  if (!Number.isInteger(trials) || trials < 0)
    throw new RangeError(`trials must be a non-negative integer, got ${trials}`);
  if (!Number.isInteger(successes) || successes < 0 || successes > trials)
    throw new RangeError(`successes must be an integer in [0, ${trials}], got ${successes}`);
}

/** z with P(|Z| ≤ z) = 1 − alpha. */
export function criticalValue(alpha: number): number {
  assertAlpha(alpha);
  return normalQuantile(1 - alpha / 2);
}

/**
 * Wilson score interval for a binomial proportion (Wilson 1927). With no trials there is no
 * information: estimate null, interval [0, 1].
 */
export function wilsonInterval(successes: number, trials: number, alpha = 0.05): IntervalEstimate {
  assertCounts(successes, trials);
  const z = criticalValue(alpha);
  if (trials === 0) return { estimate: null, lower: 0, upper: 1 };
  const p = successes / trials;
  const z2n = (z * z) / trials;
  const centre = (p + z2n / 2) / (1 + z2n);
  const halfWidth = (z / (1 + z2n)) * Math.sqrt((p * (1 - p)) / trials + z2n / (4 * trials));
  // At 0 and n successes the limit on that side is exactly the boundary; computing it would
  // leave a rounding residue (e.g. 1e-17) that reads as a non-zero lower bound.
  return {
    estimate: p,
    lower: successes === 0 ? 0 : Math.max(0, centre - halfWidth),
    upper: successes === trials ? 1 : Math.min(1, centre + halfWidth),
  };
}

/**
 * Interval for p1 − p0 over strata weighted equally, combining each stratum's Wilson limits by
 * the method of variance estimates recovered (MOVER; Zou & Donner 2008, Zou, Huang & Zhang 2009).
 * With a single stratum this is exactly Newcombe's (1998) hybrid score interval, method 10.
 * Every stratum must have trials in both groups.
 */
export function stratifiedDifference(strata: readonly TwoByTwo[], alpha = 0.05): IntervalEstimate {
  assertAlpha(alpha);
  if (strata.length === 0) return { estimate: null, lower: -1, upper: 1 };
  const weight = 1 / strata.length;
  let estimate = 0;
  let lowerSpread = 0;
  let upperSpread = 0;
  for (const stratum of strata) {
    if (stratum.trials1 === 0 || stratum.trials0 === 0)
      throw new RangeError("every stratum needs at least one trial in each group");
    const one = wilsonInterval(stratum.successes1, stratum.trials1, alpha);
    const zero = wilsonInterval(stratum.successes0, stratum.trials0, alpha);
    const p1 = one.estimate as number;
    const p0 = zero.estimate as number;
    estimate += weight * (p1 - p0);
    // The difference is lowest when p1 sits at its lower limit and p0 at its upper one.
    lowerSpread += weight * weight * ((p1 - one.lower) ** 2 + (zero.upper - p0) ** 2);
    upperSpread += weight * weight * ((one.upper - p1) ** 2 + (p0 - zero.lower) ** 2);
  }
  return {
    estimate,
    lower: Math.max(-1, estimate - Math.sqrt(lowerSpread)),
    upper: Math.min(1, estimate + Math.sqrt(upperSpread)),
  };
}

/**
 * Newcombe's (1998) hybrid score interval for p1 − p0 of two independent proportions. When a
 * group has no trials nothing is known about the difference: estimate null, interval [−1, 1].
 */
export function newcombeDifference(
  successes1: number,
  trials1: number,
  successes0: number,
  trials0: number,
  alpha = 0.05,
): IntervalEstimate {
  assertCounts(successes1, trials1);
  assertCounts(successes0, trials0);
  assertAlpha(alpha);
  if (trials1 === 0 || trials0 === 0) return { estimate: null, lower: -1, upper: 1 };
  return stratifiedDifference([{ successes1, trials1, successes0, trials0 }], alpha);
}

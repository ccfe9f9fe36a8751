// The fixed design's test of one candidate against the baseline: the exact conditional test
// guards the error rate, the score test measures the difference, and the decision needs both.
// Why this combination: docs/statistics.md ("Choosing the method").
import { stratifiedExactTails, type Tails } from "./exact.js";
import type { TwoByTwo } from "./intervals.js";
import { scoreInterval, scoreTails } from "./score.js";

export interface FixedTest {
  /** Equal-weight mean over tasks of the pass-rate differences. */
  difference: number;
  lower: number;
  upper: number;
  /** One-sided p-values of each part. */
  exact: Tails;
  score: Tails;
  /**
   * Two-sided p-value of the combined test: 2 × the smaller of the two sides, each side's
   * p-value being the larger of its exact and score p-values (a side is shown only when both
   * tests show it). It is at most alpha exactly when the interval excludes 0.
   */
  pValue: number;
}

/**
 * Decides "D > 0" when both the exact conditional test and the score test reject D ≤ 0 at
 * alpha/2 (and "D < 0" likewise); the interval is the score interval at level 1 − alpha, kept
 * on the decided side of 0 and including 0 otherwise. The exact test alone holds the level
 * under "no task differs" for any number of tasks and trials, so the combination does too.
 */
export function fixedTest(strata: readonly TwoByTwo[], alpha: number): FixedTest {
  const exact = stratifiedExactTails(strata);
  const score = scoreTails(strata);
  const upperSide = Math.max(exact.upper, score.upper);
  const lowerSide = Math.max(exact.lower, score.lower);
  const interval = scoreInterval(strata, alpha, {
    lowerAboveZero: upperSide <= alpha / 2,
    upperBelowZero: lowerSide <= alpha / 2,
  });
  return {
    difference: interval.estimate,
    lower: interval.lower,
    upper: interval.upper,
    exact,
    score,
    pValue: Math.min(1, 2 * Math.min(upperSide, lowerSide)),
  };
}

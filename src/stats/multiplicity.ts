// Family-wise error control when several candidates are compared with the same baseline.
import { formatLevel } from "./format.js";

/** How the policy's alpha is shared among the candidates of one verdict. */
export interface Family {
  /** The policy's alpha: the family-wise error rate the verdict promises. */
  alpha: number;
  /** Number of candidates compared with the baseline (k). */
  candidates: number;
  /** The alpha each comparison's interval is computed at: alpha / k. */
  comparisonAlpha: number;
}

/**
 * Bonferroni: every comparison's interval at level 1 − alpha/k, so that all k intervals hold
 * at once with probability at least 1 − alpha whatever the dependence between them (the
 * candidates share one baseline, so they are dependent). A wrong accept or reject needs a
 * missed interval, so the chance of any wrong decision in the family stays at most alpha.
 * With one candidate this is the unadjusted interval.
 */
export function familyOf(alpha: number, candidates: number): Family {
  if (!Number.isInteger(candidates) || candidates < 1)
    throw new RangeError(`the number of candidates must be a positive integer, got ${candidates}`);
  return { alpha, candidates, comparisonAlpha: alpha / candidates };
}

/**
 * "98.3333% = 1 − 0.05/3: the interval level is adjusted for 3 candidates (Bonferroni)", or ""
 * with one candidate, whose interval is not adjusted.
 */
export function describeAdjustment(family: Family): string {
  if (family.candidates === 1) return "";
  return `${formatLevel(1 - family.comparisonAlpha)} = 1 − ${family.alpha}/${family.candidates}: the interval level is adjusted for ${family.candidates} candidates (Bonferroni)`;
}

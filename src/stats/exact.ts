// Exact conditional tests of "the pass rate does not depend on the variant": Fisher's exact test
// for one task, and its stratified generalisation (the exact Cochran–Mantel–Haenszel test) for
// several. Formulas: docs/statistics.md.
import { assertCounts, type TwoByTwo } from "./intervals.js";

/**
 * Probabilities below the observed one by less than this relative amount count as equal, so
 * that tables equally extreme in theory are not split by floating-point noise (R uses the same
 * tolerance in fisher.test and mantelhaen.test).
 */
const RELATIVE_TOLERANCE = 1e-7;

/**
 * Distribution of the group-1 successes given both groups' sizes and the total successes
 * (hypergeometric), as probabilities for x = first, first + 1, … .
 */
function conditionalDistribution(table: TwoByTwo): { first: number; probabilities: number[] } {
  const { successes1, trials1, successes0, trials0 } = table;
  const total = successes1 + successes0;
  const first = Math.max(0, total - trials0);
  const last = Math.min(trials1, total);
  // Log-weights from the ratio of consecutive terms C(n1,x+1)C(n0,m−x−1) / C(n1,x)C(n0,m−x):
  // no factorials, so nothing overflows however many trials there are.
  const logWeights = [0];
  for (let x = first; x < last; x++) {
    const ratio = ((trials1 - x) * (total - x)) / ((x + 1) * (trials0 - total + x + 1));
    logWeights.push((logWeights.at(-1) as number) + Math.log(ratio));
  }
  const top = Math.max(...logWeights);
  const weights = logWeights.map((w) => Math.exp(w - top));
  const sum = weights.reduce((a, b) => a + b, 0);
  return { first, probabilities: weights.map((w) => w / sum) };
}

function convolve(a: readonly number[], b: readonly number[]): number[] {
  const out = new Array<number>(a.length + b.length - 1).fill(0);
  for (let i = 0; i < a.length; i++)
    for (let j = 0; j < b.length; j++)
      out[i + j] = (out[i + j] as number) + (a[i] as number) * (b[j] as number);
  return out;
}

/**
 * Two-sided exact conditional p-value over one or more 2×2 tables. The statistic is the total
 * of group-1 successes; conditioned on every table's margins it is a sum of independent
 * hypergeometric variables. The p-value adds the probabilities of all totals no more likely
 * than the observed one. One table: Fisher's exact test. Tables where a group has no trials
 * carry no information and are skipped; with none left the p-value is 1.
 */
export function stratifiedExactTest(tables: readonly TwoByTwo[]): number {
  const { distribution, observed } = conditionalSum(tables);
  const observedProbability = distribution[observed] as number;
  const threshold = observedProbability * (1 + RELATIVE_TOLERANCE);
  const pValue = distribution.filter((p) => p <= threshold).reduce((a, b) => a + b, 0);
  return Math.min(1, pValue);
}

/**
 * The conditional distribution of the total group-1 successes, shifted so that index 0 is the
 * smallest possible total, and the observed total's index in it.
 */
function conditionalSum(tables: readonly TwoByTwo[]): { distribution: number[]; observed: number } {
  let distribution = [1];
  let offset = 0;
  let observed = 0;
  for (const table of tables) {
    assertCounts(table.successes1, table.trials1);
    assertCounts(table.successes0, table.trials0);
    if (table.trials1 === 0 || table.trials0 === 0) continue;
    const { first, probabilities } = conditionalDistribution(table);
    distribution = convolve(distribution, probabilities);
    offset += first;
    observed += table.successes1;
  }
  return { distribution, observed: observed - offset };
}

/** Fisher's exact test, two-sided, for group 1 (successes1 of trials1) vs group 0. */
export function fisherExactTest(
  successes1: number,
  trials1: number,
  successes0: number,
  trials0: number,
): number {
  return stratifiedExactTest([{ successes1, trials1, successes0, trials0 }]);
}

/** One-sided p-values of a test: `upper` for "group 1 does better", `lower` for "worse". */
export interface Tails {
  upper: number;
  lower: number;
}

/**
 * One-sided exact conditional p-values over one or more 2×2 tables: P(S ≥ s) and P(S ≤ s) for
 * the total S of group-1 successes given every table's margins. These are the tails the
 * decision uses (each at α/2), and min(1, 2·min(upper, lower)) is the matching two-sided
 * p-value (the "central" convention, the one an interval found by inverting the two one-sided
 * tests agrees with). Tables where a group has no trials are skipped; with none left both tails
 * are 1.
 */
export function stratifiedExactTails(tables: readonly TwoByTwo[]): Tails {
  const { distribution, observed } = conditionalSum(tables);
  let upper = 0;
  let lower = 0;
  distribution.forEach((p, i) => {
    if (i >= observed) upper += p;
    if (i <= observed) lower += p;
  });
  return { upper: Math.min(1, upper), lower: Math.min(1, lower) };
}

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  fixedTest,
  scoreInterval,
  scoreStatistic,
  stratifiedExactTails,
  type TwoByTwo,
} from "../../src/stats/index.js";

const table = (successes1: number, trials1: number, successes0: number, trials0: number) => ({
  successes1,
  trials1,
  successes0,
  trials0,
});

/** The score interval alone (the decision at 0 taken from its own statistic). */
function miettinenNurminen(strata: TwoByTwo[], alpha = 0.05) {
  const z = scoreStatistic(strata, 0);
  const critical = 1.959963984540054;
  return scoreInterval(strata, alpha, {
    lowerAboveZero: z > critical,
    upperBelowZero: z < -critical,
  });
}

describe("Miettinen–Nurminen score interval for a difference of proportions", () => {
  // Newcombe RG (1998), Statistics in Medicine 17:873–890, Table II, method 6 (95%).
  it.each([
    [56, 70, 48, 80, 0.0528, 0.3382],
    [9, 10, 3, 10, 0.17, 0.8406],
    [6, 7, 2, 7, 0.0342, 0.8534],
    [5, 56, 0, 29, -0.0326, 0.1933],
    [10, 10, 0, 20, 0.7156, 1],
  ])("reproduces Newcombe's value for %i/%i − %i/%i", (s1, n1, s0, n0, lower, upper) => {
    const result = miettinenNurminen([table(s1, n1, s0, n0)]);
    expect(result.lower).toBeCloseTo(lower, 4);
    expect(result.upper).toBeCloseTo(upper, 4);
  });

  it("is symmetric: swapping the groups mirrors the interval", () => {
    const forward = miettinenNurminen([table(7, 12, 3, 9), table(2, 5, 4, 6)]);
    const backward = miettinenNurminen([table(3, 9, 7, 12), table(4, 6, 2, 5)]);
    expect(backward.lower).toBeCloseTo(-forward.upper, 8);
    expect(backward.upper).toBeCloseTo(-forward.lower, 8);
  });

  it("at 0 equals the Cochran–Mantel–Haenszel statistic when every task has the same trial counts (property)", () => {
    const strata = fc.integer({ min: 1, max: 12 }).chain((n) =>
      fc.array(
        fc
          .tuple(fc.integer({ min: 0, max: n }), fc.integer({ min: 0, max: n }))
          .map(([a, b]) => table(a, n, b, n)),
        { minLength: 1, maxLength: 6 },
      ),
    );
    fc.assert(
      fc.property(strata, (tables) => {
        let deviation = 0;
        let variance = 0;
        for (const t of tables) {
          const total = t.trials1 + t.trials0;
          const passes = t.successes1 + t.successes0;
          deviation += t.successes1 - (t.trials1 * passes) / total;
          variance +=
            (t.trials1 * t.trials0 * passes * (total - passes)) / (total * total * (total - 1));
        }
        const z = scoreStatistic(tables, 0);
        if (variance === 0) return z === 0;
        return Math.abs(z * z - (deviation * deviation) / variance) < 1e-9 * (1 + z * z);
      }),
      { numRuns: 300 },
    );
  });
});

describe("stratifiedExactTails (one-sided exact conditional p-values)", () => {
  it("gives Fisher's one-sided 17/70 for the tea-tasting table (3 of 4 vs 1 of 4)", () => {
    const tails = stratifiedExactTails([table(3, 4, 1, 4)]);
    expect(tails.upper).toBeCloseTo(17 / 70, 14);
    expect(tails.lower).toBeCloseTo(69 / 70, 14);
  });

  it("gives 1/252 for 5 of 5 against 0 of 5", () => {
    expect(stratifiedExactTails([table(5, 5, 0, 5)]).upper).toBeCloseTo(1 / 252, 15);
  });

  it("adds tasks as a convolution: two copies of a table are tested on the summed count", () => {
    // Two tables 2/2 vs 0/2: S = 4 only when both tables put both passes with group 1.
    const tails = stratifiedExactTails([table(2, 2, 0, 2), table(2, 2, 0, 2)]);
    expect(tails.upper).toBeCloseTo((1 / 6) ** 2, 15);
  });

  it("is 1 on both sides when nothing can differ", () => {
    expect(stratifiedExactTails([table(5, 5, 5, 5)])).toEqual({ upper: 1, lower: 1 });
  });
});

describe("fixedTest: decision, p-value and interval agree", () => {
  const strata = fc.array(
    fc
      .tuple(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 12 }))
      .chain(([n1, n0]) =>
        fc
          .tuple(fc.integer({ min: 0, max: n1 }), fc.integer({ min: 0, max: n0 }))
          .map(([s1, s0]) => table(s1, n1, s0, n0)),
      ),
    { minLength: 1, maxLength: 5 },
  );

  it("excludes 0 from below exactly when both one-sided tests reject, and p ≤ alpha exactly then (property)", () => {
    fc.assert(
      fc.property(strata, fc.constantFrom(0.05, 0.01, 0.05 / 3), (tables, alpha) => {
        const result = fixedTest(tables, alpha);
        const up = Math.max(result.exact.upper, result.score.upper) <= alpha / 2;
        const down = Math.max(result.exact.lower, result.score.lower) <= alpha / 2;
        return (
          result.lower > 0 === up &&
          result.upper < 0 === down &&
          (up || down) === result.pValue <= alpha &&
          result.lower <= result.difference &&
          result.difference <= result.upper
        );
      }),
      { numRuns: 400 },
    );
  });

  it("keeps the interval at 0 where the score test alone would exclude it but the exact test does not", () => {
    // 3 of 5 against 0 of 5: score z = 1.964 > 1.960, exact one-sided p = 1/12.
    const result = fixedTest([table(3, 5, 0, 5)], 0.05);
    expect(result.score.upper).toBeLessThan(0.025);
    expect(result.exact.upper).toBeCloseTo(1 / 12, 14);
    expect(result.lower).toBe(0);
    expect(result.pValue).toBeCloseTo(2 / 12, 14);
  });

  it("accepts 5 of 5 against 0 of 5 and 4 of 5 against 0 of 5, not 4 of 5 against 1 of 5", () => {
    expect(fixedTest([table(5, 5, 0, 5)], 0.05).lower).toBeGreaterThan(0);
    expect(fixedTest([table(4, 5, 0, 5)], 0.05).lower).toBeGreaterThan(0);
    expect(fixedTest([table(4, 5, 1, 5)], 0.05).lower).toBeLessThan(0);
  });
});

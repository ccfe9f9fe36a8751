import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fisherExactTest, stratifiedExactTest } from "../../src/stats/index.js";

describe("fisherExactTest (two-sided)", () => {
  // Reference values from scipy.stats.fisher_exact and R's fisher.test.
  it("gives 0.4857 for Fisher's tea-tasting table (3 of 4 vs 1 of 4)", () => {
    expect(fisherExactTest(3, 4, 1, 4)).toBeCloseTo(0.48571428571428565, 12);
  });

  it("gives 0.002759 for 1 of 10 against 11 of 14", () => {
    expect(fisherExactTest(1, 10, 11, 14)).toBeCloseTo(0.0027594561852200836, 12);
  });

  it("gives 2/252 for 5 of 5 against 0 of 5", () => {
    expect(fisherExactTest(5, 5, 0, 5)).toBeCloseTo(2 / 252, 14);
  });

  it("gives 1 when nothing differs or nothing can differ", () => {
    expect(fisherExactTest(2, 4, 2, 4)).toBeCloseTo(1, 12);
    expect(fisherExactTest(5, 5, 5, 5)).toBe(1);
    expect(fisherExactTest(0, 5, 0, 5)).toBe(1);
    expect(fisherExactTest(0, 0, 3, 5)).toBe(1);
  });

  it("stays finite with many trials (no factorial overflow)", () => {
    const p = fisherExactTest(600, 1000, 500, 1000);
    expect(p).toBeGreaterThan(0);
    expect(p).toBeLessThan(1e-5);
  });

  const twoGroups = fc
    .tuple(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 40 }))
    .chain(([n1, n0]) =>
      fc.tuple(
        fc.integer({ min: 0, max: n1 }),
        fc.constant(n1),
        fc.integer({ min: 0, max: n0 }),
        fc.constant(n0),
      ),
    );

  it("is a probability and does not depend on which group is called 1 (property)", () => {
    fc.assert(
      fc.property(twoGroups, ([s1, n1, s0, n0]) => {
        const p = fisherExactTest(s1, n1, s0, n0);
        return p > 0 && p <= 1 && Math.abs(p - fisherExactTest(s0, n0, s1, n1)) < 1e-9;
      }),
    );
  });
});

describe("stratifiedExactTest (exact conditional test over tasks)", () => {
  it("matches an independent convolution of hypergeometric distributions", () => {
    const p = stratifiedExactTest([
      { successes1: 4, trials1: 5, successes0: 1, trials0: 5 },
      { successes1: 5, trials1: 5, successes0: 2, trials0: 5 },
      { successes1: 3, trials1: 5, successes0: 3, trials0: 5 },
    ]);
    expect(p).toBeCloseTo(0.06656273620559336, 12);
    expect(
      stratifiedExactTest([
        { successes1: 2, trials1: 3, successes0: 1, trials0: 4 },
        { successes1: 7, trials1: 9, successes0: 2, trials0: 6 },
        { successes1: 0, trials1: 2, successes0: 0, trials0: 3 },
      ]),
    ).toBeCloseTo(0.08723276723276722, 12);
  });

  it("lets opposite effects on two tasks cancel, and equal effects add up", () => {
    const better = { successes1: 5, trials1: 5, successes0: 0, trials0: 5 };
    const worse = { successes1: 0, trials1: 5, successes0: 5, trials0: 5 };
    expect(stratifiedExactTest([better, worse])).toBeCloseTo(1, 12);
    expect(stratifiedExactTest([better, better])).toBeCloseTo(3.149407911312674e-5, 15);
  });

  it("is Fisher's test for one task and ignores tasks a group never completed", () => {
    const table = { successes1: 9, trials1: 10, successes0: 3, trials0: 10 };
    expect(stratifiedExactTest([table])).toBe(fisherExactTest(9, 10, 3, 10));
    expect(
      stratifiedExactTest([table, { successes1: 0, trials1: 0, successes0: 2, trials0: 4 }]),
    ).toBe(fisherExactTest(9, 10, 3, 10));
    expect(stratifiedExactTest([])).toBe(1);
  });
});

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  newcombeDifference,
  normalQuantile,
  stratifiedDifference,
  wilsonInterval,
} from "../../src/stats/index.js";

describe("normalQuantile", () => {
  it("gives the textbook critical values", () => {
    expect(normalQuantile(0.975)).toBeCloseTo(1.959963984540054, 12);
    expect(normalQuantile(0.995)).toBeCloseTo(2.5758293035489004, 12);
    expect(normalQuantile(0.95)).toBeCloseTo(1.6448536269514722, 12);
    expect(normalQuantile(0.025)).toBeCloseTo(-1.959963984540054, 12);
    expect(normalQuantile(0.5)).toBe(0);
  });

  it("rejects probabilities outside (0, 1)", () => {
    expect(() => normalQuantile(0)).toThrow(RangeError);
    expect(() => normalQuantile(1)).toThrow(RangeError);
  });
});

describe("wilsonInterval", () => {
  // Newcombe RG, "Two-sided confidence intervals for the single proportion: comparison of seven
  // methods", Statistics in Medicine 1998;17:857-872, Table I, method 3 (score, no correction).
  const published: Array<[number, number, number, number]> = [
    [81, 263, 0.2553, 0.3662],
    [15, 148, 0.0624, 0.1605],
    [0, 20, 0, 0.1611],
    [1, 29, 0.0061, 0.1718],
  ];
  for (const [s, n, lower, upper] of published) {
    it(`matches Newcombe 1998 for ${s}/${n}: ${lower} to ${upper}`, () => {
      const interval = wilsonInterval(s, n);
      expect(interval.estimate).toBeCloseTo(s / n, 12);
      expect(interval.lower).toBeCloseTo(lower, 4);
      expect(interval.upper).toBeCloseTo(upper, 4);
    });
  }

  it("uses the given alpha (90% interval for 81/263)", () => {
    const interval = wilsonInterval(81, 263, 0.1);
    expect(interval.lower).toBeCloseTo(0.2633136171884815, 10);
    expect(interval.upper).toBeCloseTo(0.3565663496084882, 10);
  });

  it("touches 0 exactly at no successes and 1 exactly at all successes", () => {
    expect(wilsonInterval(0, 5).lower).toBe(0);
    expect(wilsonInterval(5, 5).upper).toBe(1);
    expect(wilsonInterval(5, 5).lower).toBeCloseTo(0.5655175352168251, 10);
  });

  it("handles a single trial", () => {
    expect(wilsonInterval(0, 1)).toEqual({
      estimate: 0,
      lower: 0,
      upper: expect.closeTo(0.7934506856227626, 10),
    });
    expect(wilsonInterval(1, 1).lower).toBeCloseTo(0.20654931437723745, 10);
  });

  it("knows nothing with no trials: estimate null, interval [0, 1]", () => {
    expect(wilsonInterval(0, 0)).toEqual({ estimate: null, lower: 0, upper: 1 });
  });

  it("rejects impossible counts and levels", () => {
    expect(() => wilsonInterval(3, 2)).toThrow(RangeError);
    expect(() => wilsonInterval(-1, 2)).toThrow(RangeError);
    expect(() => wilsonInterval(1.5, 2)).toThrow(RangeError);
    expect(() => wilsonInterval(1, 2, 0)).toThrow(RangeError);
    expect(() => wilsonInterval(1, 2, 1)).toThrow(RangeError);
  });

  const counts = fc
    .integer({ min: 1, max: 400 })
    .chain((n) => fc.tuple(fc.integer({ min: 0, max: n }), fc.constant(n)));

  it("contains the estimate and stays within [0, 1] (property)", () => {
    fc.assert(
      fc.property(counts, fc.double({ min: 0.001, max: 0.5, noNaN: true }), ([s, n], alpha) => {
        const { estimate, lower, upper } = wilsonInterval(s, n, alpha);
        return (
          0 <= lower && lower <= (estimate as number) && (estimate as number) <= upper && upper <= 1
        );
      }),
    );
  });

  it("gets narrower with more data at the same rate (property)", () => {
    fc.assert(
      fc.property(counts, fc.integer({ min: 2, max: 20 }), ([s, n], m) => {
        const small = wilsonInterval(s, n);
        const large = wilsonInterval(s * m, n * m);
        return large.upper - large.lower < small.upper - small.lower;
      }),
    );
  });

  it("gets wider at a higher confidence level (property)", () => {
    fc.assert(
      fc.property(counts, ([s, n]) => {
        const at95 = wilsonInterval(s, n, 0.05);
        const at99 = wilsonInterval(s, n, 0.01);
        return at99.lower <= at95.lower && at99.upper >= at95.upper;
      }),
    );
  });
});

describe("newcombeDifference", () => {
  // Newcombe RG, "Interval estimation for the difference between independent proportions:
  // comparison of eleven methods", Statistics in Medicine 1998;17:873-890, Table II, method 10.
  const published: Array<[number, number, number, number, number, number]> = [
    [56, 70, 48, 80, 0.0524, 0.3339],
    [9, 10, 3, 10, 0.1705, 0.809],
    [6, 7, 2, 7, 0.0582, 0.8062],
    [5, 56, 0, 29, -0.0381, 0.1926],
    [0, 10, 0, 20, -0.1611, 0.2775],
    [0, 10, 0, 10, -0.2775, 0.2775],
    [10, 10, 0, 20, 0.6791, 1],
    [10, 10, 0, 10, 0.6075, 1],
  ];
  for (const [s1, n1, s0, n0, lower, upper] of published) {
    it(`matches Newcombe 1998 Table II for ${s1}/${n1} − ${s0}/${n0}: ${lower} to ${upper}`, () => {
      const interval = newcombeDifference(s1, n1, s0, n0);
      expect(interval.estimate).toBeCloseTo(s1 / n1 - s0 / n0, 12);
      expect(interval.lower).toBeCloseTo(lower, 4);
      expect(interval.upper).toBeCloseTo(upper, 4);
    });
  }

  it("uses the given alpha (99% interval for 9/10 − 3/10)", () => {
    const interval = newcombeDifference(9, 10, 3, 10, 0.01);
    expect(interval.lower).toBeCloseTo(0.04302696661534444, 10);
    expect(interval.upper).toBeCloseTo(0.8374050678947365, 10);
  });

  it("does not exclude 0 for 4/5 against 1/5 at 95%", () => {
    const interval = newcombeDifference(4, 5, 1, 5);
    expect(interval.lower).toBeCloseTo(-0.000285, 6);
    expect(interval.lower).toBeLessThan(0);
  });

  it("knows nothing when a group has no trials", () => {
    expect(newcombeDifference(3, 5, 0, 0)).toEqual({ estimate: null, lower: -1, upper: 1 });
    expect(newcombeDifference(0, 0, 0, 0)).toEqual({ estimate: null, lower: -1, upper: 1 });
  });

  const twoGroups = fc
    .tuple(fc.integer({ min: 1, max: 200 }), fc.integer({ min: 1, max: 200 }))
    .chain(([n1, n0]) =>
      fc.tuple(
        fc.integer({ min: 0, max: n1 }),
        fc.constant(n1),
        fc.integer({ min: 0, max: n0 }),
        fc.constant(n0),
      ),
    );

  it("contains the estimate and stays within [−1, 1] (property)", () => {
    fc.assert(
      fc.property(twoGroups, ([s1, n1, s0, n0]) => {
        const { estimate, lower, upper } = newcombeDifference(s1, n1, s0, n0);
        return (
          -1 <= lower &&
          lower <= (estimate as number) &&
          (estimate as number) <= upper &&
          upper <= 1
        );
      }),
    );
  });

  it("gets narrower with more data at the same rates (property)", () => {
    fc.assert(
      fc.property(twoGroups, fc.integer({ min: 2, max: 10 }), ([s1, n1, s0, n0], m) => {
        const small = newcombeDifference(s1, n1, s0, n0);
        const large = newcombeDifference(s1 * m, n1 * m, s0 * m, n0 * m);
        return large.upper - large.lower < small.upper - small.lower;
      }),
    );
  });

  it("moves up as the candidate passes more and down as the baseline passes more (property)", () => {
    fc.assert(
      fc.property(twoGroups, ([s1, n1, s0, n0]) => {
        const here = newcombeDifference(s1, n1, s0, n0);
        if (s1 < n1) {
          const up = newcombeDifference(s1 + 1, n1, s0, n0);
          if (up.lower < here.lower - 1e-12 || up.upper < here.upper - 1e-12) return false;
        }
        if (s0 < n0) {
          const down = newcombeDifference(s1, n1, s0 + 1, n0);
          if (down.lower > here.lower + 1e-12 || down.upper > here.upper + 1e-12) return false;
        }
        return true;
      }),
    );
  });

  it("mirrors when the groups swap (property)", () => {
    fc.assert(
      fc.property(twoGroups, ([s1, n1, s0, n0]) => {
        const forward = newcombeDifference(s1, n1, s0, n0);
        const backward = newcombeDifference(s0, n0, s1, n1);
        return (
          Math.abs(forward.lower + backward.upper) < 1e-12 &&
          Math.abs(forward.upper + backward.lower) < 1e-12
        );
      }),
    );
  });
});

describe("stratifiedDifference", () => {
  it("weights tasks equally and combines their Wilson limits (independently computed value)", () => {
    const strata = [
      { successes1: 4, trials1: 5, successes0: 1, trials0: 5 },
      { successes1: 5, trials1: 5, successes0: 2, trials0: 5 },
      { successes1: 3, trials1: 5, successes0: 3, trials0: 5 },
    ];
    const at95 = stratifiedDifference(strata);
    expect(at95.estimate).toBeCloseTo(0.4, 12);
    expect(at95.lower).toBeCloseTo(0.08349410163668192, 10);
    expect(at95.upper).toBeCloseTo(0.5970577174094319, 10);
    const at90 = stratifiedDifference(strata, 0.1);
    expect(at90.lower).toBeCloseTo(0.12714669279964436, 10);
    expect(at90.upper).toBeCloseTo(0.5786126544668969, 10);
  });

  it("is exactly Newcombe's interval for a single task", () => {
    expect(
      stratifiedDifference([{ successes1: 56, trials1: 70, successes0: 48, trials0: 80 }]),
    ).toEqual(newcombeDifference(56, 70, 48, 80));
  });

  it("behaves at 0% and 100%: two tasks of 5/5 against 0/5 give a narrower interval than one", () => {
    const one = { successes1: 5, trials1: 5, successes0: 0, trials0: 5 };
    const single = stratifiedDifference([one]);
    const double = stratifiedDifference([one, one]);
    expect(double.estimate).toBe(1);
    expect(double.upper).toBe(1);
    expect(double.lower).toBeCloseTo(0.5655175352168251, 10);
    expect(double.lower).toBeGreaterThan(single.lower);
  });

  it("knows nothing without strata and refuses a stratum with an empty group", () => {
    expect(stratifiedDifference([])).toEqual({ estimate: null, lower: -1, upper: 1 });
    expect(() =>
      stratifiedDifference([{ successes1: 0, trials1: 0, successes0: 1, trials0: 2 }]),
    ).toThrow(RangeError);
  });

  it("contains the estimate and stays within [−1, 1] for any set of tasks (property)", () => {
    const stratum = fc
      .tuple(fc.integer({ min: 1, max: 30 }), fc.integer({ min: 1, max: 30 }))
      .chain(([n1, n0]) =>
        fc.record({
          successes1: fc.integer({ min: 0, max: n1 }),
          trials1: fc.constant(n1),
          successes0: fc.integer({ min: 0, max: n0 }),
          trials0: fc.constant(n0),
        }),
      );
    fc.assert(
      fc.property(fc.array(stratum, { minLength: 1, maxLength: 12 }), (strata) => {
        const { estimate, lower, upper } = stratifiedDifference(strata);
        return (
          -1 <= lower &&
          lower <= (estimate as number) + 1e-12 &&
          (estimate as number) <= upper + 1e-12 &&
          upper <= 1
        );
      }),
    );
  });
});

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { passAtK, passAtKCurve, passHatK } from "../../src/stats/index.js";

describe("pass@k and pass^k", () => {
  it("matches the combinatorial definitions on small cases", () => {
    // n = 5, c = 2: pass@2 = 1 − C(3,2)/C(5,2) = 1 − 3/10; pass^2 = C(2,2)/C(5,2) = 1/10.
    expect(passAtK(5, 2, 1)).toBeCloseTo(0.4, 14);
    expect(passAtK(5, 2, 2)).toBeCloseTo(0.7, 14);
    expect(passHatK(5, 2, 2)).toBeCloseTo(0.1, 14);
    // n = 10, c = 3: pass@5 = 1 − C(7,5)/C(10,5) = 1 − 21/252; pass^3 = 1/C(10,3) = 1/120.
    expect(passAtK(10, 3, 5)).toBeCloseTo(1 - 21 / 252, 14);
    expect(passHatK(10, 3, 3)).toBeCloseTo(1 / 120, 14);
    expect(passHatK(10, 3, 4)).toBe(0);
    expect(passAtK(10, 3, 8)).toBe(1);
  });

  it("stays exact where the factorials would overflow (n = 200)", () => {
    // pass^100 with c = 100 of 200 is 1/C(200,100) ≈ 1.1e-59 (exact value from Python's math.comb).
    expect(passHatK(200, 100, 100) / 1.1043803465997514e-59).toBeCloseTo(1, 10);
    expect(passAtK(200, 100, 100)).toBe(1 - passHatK(200, 100, 100));
  });

  it("handles all pass, all fail and a single trial", () => {
    expect(passAtKCurve(3, 3)).toEqual([
      { k: 1, passAtK: 1, passHatK: 1 },
      { k: 2, passAtK: 1, passHatK: 1 },
      { k: 3, passAtK: 1, passHatK: 1 },
    ]);
    expect(passAtKCurve(2, 0)).toEqual([
      { k: 1, passAtK: 0, passHatK: 0 },
      { k: 2, passAtK: 0, passHatK: 0 },
    ]);
    expect(passAtKCurve(1, 1)).toEqual([{ k: 1, passAtK: 1, passHatK: 1 }]);
    expect(passAtKCurve(0, 0)).toEqual([]);
  });

  it("rejects k outside 1..n", () => {
    expect(() => passAtK(3, 1, 0)).toThrow(RangeError);
    expect(() => passAtK(3, 1, 4)).toThrow(RangeError);
    expect(() => passHatK(3, 4, 1)).toThrow(RangeError);
  });

  const counts = fc
    .integer({ min: 1, max: 60 })
    .chain((n) => fc.tuple(fc.constant(n), fc.integer({ min: 0, max: n })));

  it("pass@1 = pass^1 = c/n, pass@k grows and pass^k shrinks with k (property)", () => {
    fc.assert(
      fc.property(counts, ([n, c]) => {
        const curve = passAtKCurve(n, c);
        const first = curve[0];
        if (
          !first ||
          Math.abs(first.passAtK - c / n) > 1e-12 ||
          Math.abs(first.passHatK - c / n) > 1e-12
        )
          return false;
        for (let i = 1; i < curve.length; i++) {
          const previous = curve[i - 1];
          const point = curve[i];
          if (!previous || !point) return false;
          if (
            point.passAtK < previous.passAtK - 1e-12 ||
            point.passHatK > previous.passHatK + 1e-12
          )
            return false;
          if (point.passHatK > point.passAtK + 1e-12) return false;
        }
        const last = curve.at(-1);
        return last?.passAtK === (c > 0 ? 1 : 0) && last.passHatK === (c === n ? 1 : 0);
      }),
    );
  });
});

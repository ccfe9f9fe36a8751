import { describe, expect, it } from "vitest";
import { decideVerdict } from "../../src/stats/index.js";
import { type CellSpec, twoVariants } from "./support.js";

const verdict = (candidate: CellSpec, baseline: CellSpec) =>
  decideVerdict(twoVariants(candidate, baseline), {
    baseline: "H0",
    policy: { kind: "heuristic-v1" },
  });

describe("heuristic-v1 verdict (the seed system's rules)", () => {
  it("rejects a candidate with a lower pass rate", () => {
    const result = verdict(
      { passed: 2, failed: 3, failScore: 90 },
      { passed: 3, failed: 2, failScore: 90 },
    );
    expect(result.status).toBe("reject");
    expect(result.reason).toMatch(
      /^H1 is worse than H0 \(its pass rate is lower\): pass rate 0\.40 vs 0\.60/,
    );
  });

  it("rejects a candidate whose mean score is more than 5 points lower at the same pass rate", () => {
    const result = verdict(
      { passed: 3, failed: 2, failScore: 0 },
      { passed: 3, failed: 2, failScore: 20 },
    );
    expect(result.status).toBe("reject");
    expect(result.reason).toContain("its mean score is more than 5 points lower");
    expect(result.reason).toContain("mean score 60.0 vs 68.0");
  });

  it("rejects even when the pass rate is higher if the mean score is more than 5 points lower", () => {
    const result = verdict(
      { passed: 3, failed: 2, passScore: 60, failScore: 0 },
      { passed: 2, failed: 3, passScore: 100, failScore: 50 },
    );
    expect(result.status).toBe("reject");
  });

  it("does not reject a mean score exactly 5 points lower, decimals included", () => {
    // In binary floating point 59.4 − 64.4 = −5.000000000000007.
    expect(59.4 - 64.4).toBeLessThan(-5);
    const result = verdict({ failed: 2, failScore: 59.4 }, { failed: 2, failScore: 64.4 });
    expect(result.status).toBe("need_more_work");
    expect(result.reason).toContain("(pass rate not higher, mean score not 5 points higher)");
  });

  it("accepts a higher pass rate when the cost is at most 1.25× the baseline's", () => {
    const result = verdict(
      { passed: 3, failed: 2, failScore: 90, costUsd: 0.125 },
      { passed: 2, failed: 3, failScore: 90, costUsd: 0.1 },
    );
    expect(result.status).toBe("accept");
    expect(result.best).toBe("H1");
    expect(result.reason).toContain(
      "H1 is better than H0 (its pass rate is higher): pass rate 0.60 vs 0.40, mean score 96.0 vs 94.0",
    );
    expect(result.reason).toContain("USD cost ratio 1.25 ≤ 1.25");
    expect(result.comparisons[0]?.enoughTrials).toBeNull();
  });

  it("accepts a mean score exactly 5 points higher at the same pass rate, decimals included", () => {
    // In binary floating point 64.1 − 59.1 = 4.999999999999993.
    expect(64.1 - 59.1).toBeLessThan(5);
    const result = verdict({ failed: 2, failScore: 64.1 }, { failed: 2, failScore: 59.1 });
    expect(result.status).toBe("accept");
    expect(result.reason).toContain("its mean score is at least 5 points higher");
  });

  it("accepts a cost of exactly 1.25× the baseline's in decimal even when binary rounding says more", () => {
    expect(2.35 / 1.88).toBeGreaterThan(1.25);
    const result = verdict(
      { passed: 3, failed: 2, costUsd: 2.35 },
      { passed: 2, failed: 3, costUsd: 1.88 },
    );
    expect(result.status).toBe("accept");
    expect(result.reason).toContain("USD cost ratio 1.25 ≤ 1.25");
  });

  it("needs more work when the better candidate costs more than 1.25× in USD", () => {
    const result = verdict(
      { passed: 3, failed: 2, costUsd: 0.13 },
      { passed: 2, failed: 3, costUsd: 0.1 },
    );
    expect(result.status).toBe("need_more_work");
    expect(result.reason).toContain("but costs too much");
    expect(result.reason).toContain("USD cost ratio 1.30 > 1.25");
  });

  it("needs more work when the better candidate costs more than 1.25× in credits", () => {
    const result = verdict(
      { passed: 3, failed: 2, costUsd: 0.1, credits: 13 },
      { passed: 2, failed: 3, costUsd: 0.1, credits: 10 },
    );
    expect(result.status).toBe("need_more_work");
    expect(result.reason).toContain("USD cost ratio 1.00 ≤ 1.25; credits cost ratio 1.30 > 1.25");
  });

  it("skips the cost test when the baseline's cost is 0", () => {
    const result = verdict(
      { passed: 3, failed: 2, costUsd: 5 },
      { passed: 2, failed: 3, costUsd: 0 },
    );
    expect(result.status).toBe("accept");
    expect(result.reason).toContain("USD cost test skipped: H0's USD cost is 0");
  });

  it("needs more work at the same pass rate and a mean score within 5 points", () => {
    const result = verdict(
      { passed: 1, failed: 1, failScore: 60 },
      { passed: 1, failed: 1, failScore: 58 },
    );
    expect(result.status).toBe("need_more_work");
    expect(result.reason).toBe(
      "H1 is not clearly different from H0 (pass rate not higher, mean score not 5 points higher): pass rate 0.50 vs 0.50, mean score 80.0 vs 79.0, 2 completed trials each",
    );
  });

  it("excludes infrastructure errors from the pass rates", () => {
    const result = verdict({ passed: 3, failed: 2, infra: 5 }, { passed: 5, failed: 5 });
    expect(result.status).toBe("accept");
    expect(result.reason).toContain("pass rate 0.60 vs 0.50");
    expect(result.reason).toContain(
      "5 infrastructure errors excluded (counted as failures: pass rate 0.30 vs 0.50)",
    );
  });

  it("gives infrastructure_error when a variant completed no trials", () => {
    const result = verdict({ passed: 3 }, { infra: 2 });
    expect(result.status).toBe("infrastructure_error");
    expect(result.reason).toBe(
      "no verdict: no completed trial for H0 on task readme (2 infrastructure errors)",
    );
  });

  it("still reports the statistics, at 95%, without letting them decide", () => {
    const result = verdict({ passed: 1, failed: 0 }, { failed: 1 });
    expect(result.status).toBe("accept");
    expect(result.comparisons[0]?.interval).toMatchObject({
      level: 0.95,
      method: "score-with-exact-test",
    });
    expect(result.comparisons[0]?.interval?.lower).toBeLessThan(0);
  });
});

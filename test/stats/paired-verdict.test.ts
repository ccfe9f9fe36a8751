import { describe, expect, it } from "vitest";
import {
  canStopEarly,
  DEFAULT_PAIRED_POLICY,
  decideVerdict,
  type PairedPolicy,
} from "../../src/stats/index.js";
import { type CellSpec, twoVariants } from "./support.js";

const verdict = (candidate: CellSpec, baseline: CellSpec, policy: Partial<PairedPolicy> = {}) =>
  decideVerdict(twoVariants(candidate, baseline), {
    baseline: "H0",
    policy: { ...DEFAULT_PAIRED_POLICY, ...policy },
  });

describe("paired-v1 verdict, one task", () => {
  it("accepts when the interval lies above 0, trials suffice and the cost is within the limit", () => {
    const result = verdict({ passed: 5, costUsd: 0.11 }, { failed: 5, costUsd: 0.1 });
    expect(result.status).toBe("accept");
    expect(result.best).toBe("H1");
    expect(result.reason).toContain(
      "pass rate 1.00 vs 0.00, difference +1.00 (95% CI +0.40 to +1.00, p = 0.0079), 5 completed trials each",
    );
    expect(result.reason).toContain("USD cost ratio 1.10 ≤ 1.25");
    const [comparison] = result.comparisons;
    expect(comparison).toMatchObject({
      variant: "H1",
      baseline: "H0",
      status: "accept",
      tasks: ["readme"],
      difference: 1,
      interval: { upper: 1, level: 0.95, method: "score-with-exact-test" },
      exactTestMethod: "fisher-exact",
      test: { design: "fixed", method: "exact-conditional-and-score", threshold: 0.05 },
      enoughTrials: true,
      flippedTasks: [
        { task: "readme", direction: "improved", variantPassRate: 1, baselinePassRate: 0 },
      ],
    });
    // Miettinen–Nurminen 95% lower limit for 5/5 − 0/5.
    expect(comparison?.interval?.lower).toBeCloseTo(0.40171, 5);
    // Fisher: P(all 5 passes with H1) = 1/252 on each side; the larger of the exact and score
    // p-values decides, here the exact one.
    expect(comparison?.exactPValue).toBeCloseTo(2 / 252, 12);
    expect(comparison?.test?.pValue).toBeCloseTo(2 / 252, 12);
    expect(comparison?.costRatio.usd).toBeCloseTo(1.1, 12);
    expect(comparison?.passRatePerUsd.variant).toBeCloseTo(1 / 0.11, 10);
    expect(comparison?.passRatePerUsd.baseline).toBe(0);
  });

  it("rejects when the interval lies below 0, even with few trials", () => {
    const result = verdict({ failed: 4 }, { passed: 4 });
    expect(result.status).toBe("reject");
    expect(result.reason).toMatch(
      /^H1 is worse than H0 \(the interval lies below 0\): pass rate 0\.00 vs 1\.00, difference -1\.00/,
    );
    expect(result.comparisons[0]?.flippedTasks).toEqual([
      { task: "readme", direction: "regressed", variantPassRate: 0, baselinePassRate: 1 },
    ]);
  });

  it("does not reject with 3 trials each, however they fall (the exact test cannot reach 0.025)", () => {
    const result = verdict({ failed: 3 }, { passed: 3 });
    expect(result.status).toBe("need_more_work");
    expect(result.comparisons[0]?.test?.pValue).toBeCloseTo(0.1, 12);
  });

  it("needs more work when the interval includes 0 (4 of 5 against 1 of 5), and says how many trials would settle it", () => {
    const result = verdict({ passed: 4, failed: 1 }, { passed: 1, failed: 4 });
    expect(result.status).toBe("need_more_work");
    expect(result.reason).toBe(
      "H1 is not clearly different from H0 (the interval includes 0): pass rate 0.80 vs 0.20, difference +0.60 (95% CI -0.05 to +0.89, p = 0.21), 5 completed trials each; about 9 completed trials per variant and task (8 more trials) would likely settle it if the observed pass rates hold",
    );
    expect(result.comparisons[0]?.toSettle).toEqual({
      trialsPerCell: 9,
      moreTrials: 8,
      moreCostUsd: null,
    });
  });

  it("says when the exact test keeps the interval at 0 though the score test alone would exclude it (3 of 5 against 0 of 5)", () => {
    const result = verdict({ passed: 3, failed: 2, costUsd: 0.5 }, { failed: 5, costUsd: 0.5 });
    expect(result.status).toBe("need_more_work");
    expect(result.comparisons[0]?.interval?.lower).toBe(0);
    expect(result.reason).toContain("(95% CI 0 to +0.");
    expect(result.reason).toContain(
      "the score test alone would exclude 0, but the exact conditional test does not (one-sided p = 0.083 > 0.025)",
    );
    expect(result.comparisons[0]?.toSettle?.moreCostUsd).toBeCloseTo(
      (result.comparisons[0]?.toSettle?.moreTrials ?? 0) * 0.5,
      10,
    );
  });

  it("needs more work when the interval is above 0 but a variant has fewer than minTrials completed trials", () => {
    const short = verdict({ passed: 4 }, { failed: 4 });
    expect(short.comparisons[0]?.interval?.lower).toBeGreaterThan(0);
    expect(short.status).toBe("need_more_work");
    expect(short.comparisons[0]?.enoughTrials).toBe(false);
    expect(short.reason).toContain("too few trials to accept");
    expect(short.reason).toContain(
      "H1 has 4 completed trials on task readme, H0 has 4 completed trials on task readme (policy needs at least 5)",
    );
    expect(verdict({ passed: 4 }, { failed: 4 }, { minTrials: 4 }).status).toBe("accept");
  });

  it("counts only completed trials toward minTrials", () => {
    const result = verdict({ passed: 5 }, { failed: 4, infra: 1 });
    expect(result.status).toBe("need_more_work");
    expect(result.reason).toContain("H0 has 4 completed trials on task readme");
  });

  it("needs more work when the candidate costs more than maxCostRatio times the baseline", () => {
    const result = verdict({ passed: 5, costUsd: 0.2 }, { failed: 5, costUsd: 0.1 });
    expect(result.status).toBe("need_more_work");
    expect(result.reason).toContain("H1 is better than H0 but costs too much");
    expect(result.reason).toContain("USD cost ratio 2.00 > 1.25");
    expect(result.comparisons[0]?.costChecks[0]).toMatchObject({
      currency: "usd",
      status: "failed",
      ratio: 2,
      maxRatio: 1.25,
    });
    expect(
      verdict({ passed: 5, costUsd: 0.2 }, { failed: 5, costUsd: 0.1 }, { maxCostRatio: 2 }).status,
    ).toBe("accept");
  });

  it("shows a ratio just over the limit with enough decimals to see it is over", () => {
    const result = verdict({ passed: 5, costUsd: 1.2504 }, { failed: 5, costUsd: 1 });
    expect(result.reason).toContain("USD cost ratio 1.2504 > 1.25");
  });

  it("tests credits when only credits are reported", () => {
    const result = verdict({ passed: 5, credits: 130 }, { failed: 5, credits: 100 });
    expect(result.status).toBe("need_more_work");
    expect(result.reason).toContain("credits cost ratio 1.30 > 1.25");
    expect(result.reason).toContain("USD cost test skipped: neither variant reported USD");
    expect(result.comparisons[0]?.costRatio).toEqual({
      usd: null,
      credits: 1.3,
      usdWithEstimates: null,
    });
    expect(verdict({ passed: 5, credits: 120 }, { failed: 5, credits: 100 }).status).toBe("accept");
  });

  it("skips the cost test when the baseline's cost is 0 and says so", () => {
    const result = verdict({ passed: 5, costUsd: 3 }, { failed: 5, costUsd: 0 });
    expect(result.status).toBe("accept");
    expect(result.reason).toContain("USD cost test skipped: H0's USD cost is 0");
    expect(result.comparisons[0]?.costRatio.usd).toBeNull();
  });

  it("skips the cost test when only the baseline reported a cost and says so", () => {
    const result = verdict({ passed: 5 }, { failed: 5, costUsd: 0.1 });
    expect(result.status).toBe("accept");
    expect(result.reason).toContain("USD cost test skipped: H1 reported no USD");
  });

  it("compares USD with list-price estimates when one host reports tokens only, and says so", () => {
    // Claude Code reports USD; Codex reports tokens, priced at its model's list price.
    const within = verdict({ passed: 5, estimatedCostUsd: 0.12 }, { failed: 5, costUsd: 0.1 });
    expect(within.status).toBe("accept");
    expect(within.comparisons[0]?.costChecks.map((c) => [c.currency, c.status])).toEqual([
      ["usd", "skipped"],
      ["usd-estimated", "passed"],
      ["credits", "skipped"],
    ]);
    expect(within.comparisons[0]?.costRatio.usdWithEstimates).toBeCloseTo(1.2);
    const over = verdict({ passed: 5, estimatedCostUsd: 0.2 }, { failed: 5, costUsd: 0.1 });
    expect(over.status).toBe("need_more_work");
    expect(over.reason).toContain(
      "USD cost ratio 2.00 > 1.25, with list-price estimates from tokens where a host reported no USD",
    );
  });

  it("never lets an estimate stand in for a reported amount: both reported, USD decides as reported", () => {
    const result = verdict(
      { passed: 5, costUsd: 0.11, estimatedCostUsd: 10 },
      { failed: 5, costUsd: 0.1 },
    );
    expect(result.status).toBe("accept");
    expect(result.comparisons[0]?.costChecks.map((c) => c.currency)).toEqual(["usd", "credits"]);
  });

  it("decides on completed trials and also reports the rates with infrastructure errors as failures", () => {
    const result = verdict({ passed: 5, infra: 1 }, { failed: 5 });
    expect(result.status).toBe("accept");
    expect(result.reason).toContain(
      "1 infrastructure error excluded (counted as failures: pass rate 0.83 vs 0.00)",
    );
    const [comparison] = result.comparisons;
    expect(comparison?.passRate.variant).toEqual({ excludingInfra: 1, infraAsFailure: 5 / 6 });
    expect(comparison?.infraAsFailure.difference).toBe(5 / 6);
    expect(comparison?.infraAsFailure.interval?.lower).toBeLessThan(
      comparison?.interval?.lower ?? 0,
    );
  });

  it("accepts only if the difference also holds with infrastructure errors counted as failures", () => {
    // Left out, the candidate's ten infrastructure errors would make it look clearly better.
    const result = verdict({ passed: 5, infra: 10 }, { passed: 0, failed: 5 });
    expect(result.comparisons[0]?.interval?.lower).toBeGreaterThan(0);
    expect(result.comparisons[0]?.infraAsFailure.interval?.lower).toBeLessThanOrEqual(0);
    expect(result.status).toBe("need_more_work");
    expect(result.reason).toContain("not once its infrastructure errors count as failures");
    expect(result.reason).toMatch(/with them counted as failures the 95% CI .* reaches 0/);
  });

  it("uses the policy's alpha for the interval and names the level", () => {
    const at95 = verdict({ passed: 9, failed: 1 }, { passed: 3, failed: 7 });
    const at99 = verdict({ passed: 9, failed: 1 }, { passed: 3, failed: 7 }, { alpha: 0.01 });
    expect(at95.status).toBe("accept");
    expect(at99.status).toBe("need_more_work");
    expect(at99.reason).toContain("(99% CI 0 to +0.88, p = 0.02)");
    expect(at99.comparisons[0]?.interval?.level).toBe(0.99);
  });

  it("gives infrastructure_error when the candidate completed no trial", () => {
    const result = verdict({ infra: 3 }, { passed: 5 });
    expect(result.status).toBe("infrastructure_error");
    expect(result.reason).toBe(
      "no verdict: no completed trial for H1 on task readme (3 infrastructure errors)",
    );
    expect(result.comparisons[0]).toMatchObject({
      status: "infrastructure_error",
      difference: null,
      interval: null,
      exactPValue: null,
    });
  });

  it("gives infrastructure_error when the baseline has no trials at all", () => {
    const result = decideVerdict(twoVariants({ passed: 5 }, {}), {
      baseline: "H0",
      policy: DEFAULT_PAIRED_POLICY,
    });
    expect(result.status).toBe("infrastructure_error");
    expect(result.reason).toContain("H0 on task readme (no trials)");
  });

  it("handles one trial each without accepting", () => {
    const result = verdict({ passed: 1 }, { failed: 1 }, { minTrials: 1 });
    expect(result.status).toBe("need_more_work");
    expect(result.reason).toContain("1 completed trial each");
  });

  it("does not call equal all-pass or all-fail results different", () => {
    expect(verdict({ passed: 10 }, { passed: 10 }).status).toBe("need_more_work");
    const allFail = verdict({ failed: 10 }, { failed: 10 });
    expect(allFail.status).toBe("need_more_work");
    expect(allFail.comparisons[0]?.exactPValue).toBe(1);
    expect(allFail.comparisons[0]?.test?.pValue).toBe(1);
    expect(allFail.comparisons[0]?.flippedTasks).toEqual([]);
  });
});

describe("decideVerdict's input", () => {
  const good = twoVariants({ passed: 5 }, { failed: 5 });
  const options = { baseline: "H0", policy: DEFAULT_PAIRED_POLICY };
  it.each([
    ["a NaN cost", { costUsd: Number.NaN }, "costUsd"],
    ["a negative cost", { costUsd: -1 }, "costUsd"],
    ["a fractional trial number", { trial: 1.5 }, "trial"],
    ["an outcome spelled PASSED", { outcome: "PASSED" }, "outcome"],
    ["a score over 100", { score: 101 }, "score"],
  ])("refuses %s, naming the record and the field", (_, change, field) => {
    const trials = good.map((t, i) => (i === 2 ? { ...t, ...change } : t)) as typeof good;
    expect(() => decideVerdict(trials, options)).toThrow(
      new RegExp(
        `^trial record 2 \\("H1", task "readme", trial .*\\) cannot be decided on: ${field}: `,
      ),
    );
    expect(() => canStopEarly(trials, { ...options, plannedTrials: 5 })).toThrow(RangeError);
  });
});

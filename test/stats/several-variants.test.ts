import { describe, expect, it } from "vitest";
import {
  DEFAULT_PAIRED_POLICY,
  decideVerdict,
  fixedTest,
  stratifiedExactTails,
  type TrialRecord,
} from "../../src/stats/index.js";
import { cell } from "./support.js";

const paired = { baseline: "base", policy: DEFAULT_PAIRED_POLICY };

describe("verdict with several tasks", () => {
  const trials: TrialRecord[] = [
    ...cell("base", "a", { passed: 1, failed: 4 }),
    ...cell("base", "b", { passed: 1, failed: 4 }),
    ...cell("base", "c", { passed: 2, failed: 3 }),
    ...cell("cand", "a", { passed: 4, failed: 1 }),
    ...cell("cand", "b", { passed: 5 }),
    ...cell("cand", "c", { passed: 4, failed: 1 }),
  ];

  it("compares on every task with the stratified test and its interval", () => {
    const result = decideVerdict(trials, paired);
    const [comparison] = result.comparisons;
    const strata = [
      { successes1: 4, trials1: 5, successes0: 1, trials0: 5 },
      { successes1: 5, trials1: 5, successes0: 1, trials0: 5 },
      { successes1: 4, trials1: 5, successes0: 2, trials0: 5 },
    ];
    const expected = fixedTest(strata, 0.05);
    expect(comparison?.tasks).toEqual(["a", "b", "c"]);
    expect(comparison?.difference).toBeCloseTo(0.6, 12);
    expect(comparison?.interval).toEqual({
      lower: expected.lower,
      upper: expected.upper,
      level: 0.95,
      method: "score-with-exact-test",
    });
    expect(comparison?.exactTestMethod).toBe("stratified-exact-conditional");
    const exact = stratifiedExactTails(strata);
    expect(comparison?.exactPValue).toBe(2 * Math.min(exact.upper, exact.lower));
    expect(comparison?.test?.pValue).toBe(expected.pValue);
    expect(result.status).toBe("accept");
    expect(result.reason).toContain("over 3 tasks, 5 completed trials per variant per task");
    expect(comparison?.passRate.variant.excludingInfra).toBeCloseTo(13 / 15, 12);
    expect(comparison?.passRate.baseline.excludingInfra).toBeCloseTo(4 / 15, 12);
  });

  it("lists the tasks whose majority outcome flipped, and not a task whose baseline tied", () => {
    const flips = decideVerdict(
      [
        ...cell("base", "fixed", { passed: 1, failed: 2 }),
        ...cell("cand", "fixed", { passed: 2, failed: 1 }),
        ...cell("base", "broken", { passed: 3 }),
        ...cell("cand", "broken", { failed: 3 }),
        ...cell("base", "tied", { passed: 1, failed: 1 }),
        ...cell("cand", "tied", { passed: 2 }),
        ...cell("base", "same", { passed: 3 }),
        ...cell("cand", "same", { passed: 2, failed: 1 }),
      ],
      paired,
    ).comparisons[0]?.flippedTasks;
    expect(flips).toEqual([
      { task: "broken", direction: "regressed", variantPassRate: 0, baselinePassRate: 1 },
      { task: "fixed", direction: "improved", variantPassRate: 2 / 3, baselinePassRate: 1 / 3 },
    ]);
  });

  it("requires minTrials completed trials on every task to accept", () => {
    const result = decideVerdict(
      [...trials.filter((t) => !(t.variant === "cand" && t.task === "c" && t.trial === 5))],
      paired,
    );
    expect(result.comparisons[0]?.interval?.lower).toBeGreaterThan(0);
    expect(result.status).toBe("need_more_work");
    expect(result.reason).toContain(
      "cand has 4 completed trials on task c (policy needs at least 5)",
    );
    expect(result.reason).toContain("over 3 tasks, 4–5 completed trials per variant per task");
  });

  it("gives infrastructure_error when a variant has one task without any completed trial", () => {
    const result = decideVerdict(
      [
        ...trials.filter((t) => !(t.variant === "cand" && t.task === "b")),
        ...cell("cand", "b", { infra: 5 }),
      ],
      paired,
    );
    expect(result.status).toBe("infrastructure_error");
    expect(result.reason).toBe(
      "no verdict: no completed trial for cand on task b (5 infrastructure errors)",
    );
    // The comparison still shows what the other tasks say.
    expect(result.comparisons[0]?.tasks).toEqual(["a", "c"]);
    expect(result.comparisons[0]?.status).toBe("infrastructure_error");
  });

  it("treats a planned task nobody ran as missing", () => {
    const result = decideVerdict(trials, { ...paired, tasks: ["a", "b", "c", "d"] });
    expect(result.status).toBe("infrastructure_error");
    expect(result.reason).toContain("base on task d (no trials), cand on task d (no trials)");
  });

  it("does not depend on the order of the records", () => {
    expect(decideVerdict([...trials].reverse(), paired)).toEqual(decideVerdict(trials, paired));
  });
});

describe("verdict with several candidates", () => {
  const base = cell("base", "t", { passed: 1, failed: 7 });
  const strong = cell("strong", "t", { passed: 8 });
  const good = cell("good", "t", { passed: 7, failed: 1 });
  const unclear = cell("unclear", "t", { passed: 2, failed: 6 });
  const weak = cell("weak", "t", { failed: 8 });
  const broken = cell("broken", "t", { infra: 8 });

  it("compares every candidate with the baseline, in name order", () => {
    const result = decideVerdict([...base, ...weak, ...strong, ...unclear], paired);
    expect(result.comparisons.map((c) => [c.variant, c.status])).toEqual([
      ["strong", "accept"],
      ["unclear", "need_more_work"],
      ["weak", "need_more_work"],
    ]);
  });

  it("accepts when at least one candidate is accepted and names the one with the largest difference", () => {
    const result = decideVerdict([...base, ...good, ...strong, ...unclear], paired);
    expect(result.status).toBe("accept");
    expect(result.best).toBe("strong");
    expect(result.reason).toMatch(
      /^2 of 3 candidates accepted; best: strong \(difference \+0\.88\)\. good: accept — /,
    );
    expect(result.reason).toContain(
      ". unclear: need_more_work — unclear is not clearly different from base",
    );
  });

  it("rejects when every candidate is rejected", () => {
    const worse = cell("worse", "t", { failed: 8 });
    const result = decideVerdict([...cell("base", "t", { passed: 8 }), ...weak, ...worse], paired);
    expect(result.comparisons.map((c) => c.status)).toEqual(["reject", "reject"]);
    expect(result.status).toBe("reject");
    expect(result.best).toBeNull();
    expect(result.reason).toMatch(/^all 2 candidates are worse than base\. weak: reject — /);
  });

  it("needs more work when none is accepted and not all are rejected", () => {
    const result = decideVerdict(
      [...cell("base", "t", { passed: 8 }), ...weak, ...cell("same", "t", { passed: 8 })],
      paired,
    );
    expect(result.comparisons.map((c) => c.status)).toEqual(["need_more_work", "reject"]);
    expect(result.status).toBe("need_more_work");
    expect(result.reason).toMatch(
      /^no candidate accepted and not all rejected\. same: need_more_work — /,
    );
  });

  it("gives infrastructure_error when any variant completed nothing, even if another was accepted", () => {
    const result = decideVerdict([...base, ...strong, ...broken], paired);
    expect(result.comparisons.map((c) => [c.variant, c.status])).toEqual([
      ["broken", "infrastructure_error"],
      ["strong", "accept"],
    ]);
    expect(result.status).toBe("infrastructure_error");
    expect(result.best).toBeNull();
    expect(result.reason).toBe(
      "no verdict: no completed trial for broken on task t (8 infrastructure errors)",
    );
  });

  it("applies heuristic-v1 to each candidate the same way", () => {
    const result = decideVerdict([...base, ...good, ...weak], {
      baseline: "base",
      policy: { kind: "heuristic-v1" },
    });
    expect(result.comparisons.map((c) => [c.variant, c.status])).toEqual([
      ["good", "accept"],
      ["weak", "reject"],
    ]);
    expect(result.status).toBe("accept");
    expect(result.best).toBe("good");
  });
});

describe("verdict input mistakes (programmer errors)", () => {
  const trials = [...cell("base", "t", { passed: 1 }), ...cell("cand", "t", { passed: 1 })];

  it("refuses a verdict with no candidate", () => {
    expect(() => decideVerdict(cell("base", "t", { passed: 1 }), paired)).toThrow(
      /at least one variant besides the baseline/,
    );
  });

  it("refuses a baseline that is not among the planned variants", () => {
    expect(() => decideVerdict(trials, { ...paired, variants: ["cand", "other"] })).toThrow(
      /not among the planned variants/,
    );
  });

  it("refuses an invalid policy", () => {
    expect(() =>
      decideVerdict(trials, { baseline: "base", policy: { ...DEFAULT_PAIRED_POLICY, alpha: 1.5 } }),
    ).toThrow(/invalid verdict policy/);
  });
});

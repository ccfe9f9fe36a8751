import { describe, expect, it } from "vitest";
import {
  canStopEarly,
  DEFAULT_PAIRED_POLICY,
  decideVerdict,
  fixedTest,
  type TrialRecord,
} from "../../src/stats/index.js";
import { cell, seededRandom } from "./support.js";

const paired = { baseline: "base", policy: DEFAULT_PAIRED_POLICY };
/** A candidate's passes of 8 against the baseline's passes of 8. */
const table = (passes: number, basePasses: number) => ({
  successes1: passes,
  trials1: 8,
  successes0: basePasses,
  trials0: 8,
});
const threeCandidateLevel = 1 - 0.05 / 3;

describe("several candidates under paired-v1: Bonferroni-adjusted intervals", () => {
  // 7/8 vs 2/8: p = 0.041, so the 95% interval starts at +0.13 and the 98.33% one at 0.
  const base = cell("base", "t", { passed: 2, failed: 6 });
  const edge = cell("edge", "t", { passed: 7, failed: 1 });
  const clear = cell("clear", "t", { passed: 8 });
  const same = cell("same", "t", { passed: 2, failed: 6 });

  it("needs more work for a candidate whose 95% interval lies above 0 but whose adjusted interval includes 0", () => {
    expect(fixedTest([table(7, 2)], 0.05).lower).toBeGreaterThan(0);
    expect(fixedTest([table(7, 2)], 0.05 / 3).lower).toBeLessThanOrEqual(0);
    // Alone against the baseline, the same data are accepted.
    expect(decideVerdict([...base, ...edge], paired).status).toBe("accept");

    const others = [...same, ...cell("worse", "t", { failed: 8 })];
    const result = decideVerdict([...base, ...edge, ...others], paired);
    const comparison = result.comparisons.find((c) => c.variant === "edge");
    expect(comparison?.status).toBe("need_more_work");
    expect(comparison?.interval?.level).toBe(threeCandidateLevel);
    expect(comparison?.interval?.lower).toBe(fixedTest([table(7, 2)], 0.05 / 3).lower);
    expect(comparison?.reason).toMatch(
      /^edge is not clearly different from base \(the interval includes 0\): pass rate 0\.88 vs 0\.25, difference \+0\.63 \(98\.3333% CI 0 to \+0\.90, p = 0\.041\), 8 completed trials each; 98\.3333% = 1 − 0\.05\/3: the interval level is adjusted for 3 candidates \(Bonferroni\)/,
    );
    expect(result.status).toBe("need_more_work");
    expect(result.best).toBeNull();
  });

  it("still accepts a clearly better candidate, and says the level was adjusted", () => {
    const result = decideVerdict([...base, ...clear, ...edge, ...same], paired);
    expect(result.comparisons.map((c) => [c.variant, c.status])).toEqual([
      ["clear", "accept"],
      ["edge", "need_more_work"],
      ["same", "need_more_work"],
    ]);
    expect(result.status).toBe("accept");
    expect(result.best).toBe("clear");
    const clearComparison = result.comparisons[0];
    expect(clearComparison?.interval?.level).toBe(threeCandidateLevel);
    expect(clearComparison?.reason).toContain(
      "(98.3333% CI +0.18 to +0.95, p = 0.007), 8 completed trials each; 98.3333% = 1 − 0.05/3: the interval level is adjusted for 3 candidates (Bonferroni)",
    );
    expect(result.reason).toMatch(
      /^1 of 3 candidates accepted; best: clear \(difference \+0\.75\)/,
    );
  });

  it("computes the infrastructure-as-failure interval at the same adjusted level", () => {
    const result = decideVerdict(
      [...base, ...clear, ...edge, ...cell("same", "t", { passed: 2, failed: 5, infra: 1 })],
      paired,
    );
    const withInfra = result.comparisons.find((c) => c.variant === "same")?.infraAsFailure;
    expect(withInfra?.interval?.level).toBe(threeCandidateLevel);
    expect(withInfra?.interval?.lower).toBe(
      fixedTest([{ successes1: 2, trials1: 8, successes0: 2, trials0: 8 }], 0.05 / 3).lower,
    );
  });

  it("counts a planned candidate without records toward k", () => {
    const result = decideVerdict([...base, ...clear], {
      ...paired,
      variants: ["base", "clear", "later"],
    });
    expect(result.status).toBe("infrastructure_error");
    expect(result.comparisons[0]?.interval?.level).toBe(1 - 0.05 / 2);
  });

  it("rejects with the adjusted interval only when it lies below 0", () => {
    const result = decideVerdict(
      [...cell("base", "t", { passed: 8 }), ...cell("low", "t", { failed: 8 }), ...clear],
      paired,
    );
    const low = result.comparisons.find((c) => c.variant === "low");
    expect(low?.status).toBe("reject");
    expect(low?.interval?.level).toBe(1 - 0.05 / 2);
    expect(low?.reason).toContain(
      "97.5% = 1 − 0.05/2: the interval level is adjusted for 2 candidates",
    );
  });

  it("leaves a single candidate's interval at 1 − alpha with no adjustment note", () => {
    const result = decideVerdict([...base, ...edge], paired);
    expect(result.comparisons[0]?.interval?.level).toBe(0.95);
    expect(result.reason).not.toContain("adjusted");
  });

  it("does not adjust heuristic-v1, whose rules use no interval", () => {
    const result = decideVerdict([...base, ...edge, ...same], {
      baseline: "base",
      policy: { kind: "heuristic-v1" },
    });
    expect(result.comparisons.map((c) => c.interval?.level)).toEqual([0.95, 0.95]);
    expect(result.comparisons[0]?.status).toBe("accept");
    expect(result.reason).not.toContain("adjusted");
  });
});

describe("family-wise false accepts when every candidate equals the baseline", () => {
  // 10 candidates and the baseline, each 20 trials on one task with true pass rate 0.5.
  const candidates = Array.from({ length: 10 }, (_, i) => `c${i + 1}`);
  const trialsPerVariant = 20;
  const alpha = DEFAULT_PAIRED_POLICY.alpha;

  const passesOf = (random: () => number) => {
    let passes = 0;
    for (let i = 0; i < trialsPerVariant; i++) if (random() < 0.5) passes++;
    return passes;
  };
  const records = (variant: string, passes: number): TrialRecord[] =>
    cell(variant, "t", { passed: passes, failed: trialsPerVariant - passes });

  it("keeps the sampled rate of accepting any candidate at most alpha, where testing each at alpha does not", () => {
    const random = seededRandom(20240611);
    const experiments = 600;
    const acceptedAlone = new Map<string, boolean>();
    const isAcceptedAlone = (passes: number, basePasses: number) => {
      const key = `${passes}/${basePasses}`;
      let accepted = acceptedAlone.get(key);
      if (accepted === undefined) {
        const alone = [...records("c1", passes), ...records("base", basePasses)];
        accepted = decideVerdict(alone, paired).status === "accept";
        acceptedAlone.set(key, accepted);
      }
      return accepted;
    };
    let familyAccepts = 0;
    let uncorrectedAccepts = 0;
    for (let e = 0; e < experiments; e++) {
      const basePasses = passesOf(random);
      const passes = candidates.map(() => passesOf(random));
      const trials = [
        ...records("base", basePasses),
        ...candidates.flatMap((name, i) => records(name, passes[i] as number)),
      ];
      if (decideVerdict(trials, paired).status === "accept") familyAccepts++;
      if (passes.some((p) => isAcceptedAlone(p, basePasses))) uncorrectedAccepts++;
    }
    // The exact values (enumeration below) are 0.0093 and 0.0663.
    expect(familyAccepts / experiments).toBeLessThanOrEqual(alpha);
    expect(uncorrectedAccepts / experiments).toBeGreaterThan(alpha);
  });

  it("keeps the exact rate at most alpha, enumerating every outcome", () => {
    const binomial: number[] = [];
    let coefficient = 1;
    for (let k = 0; k <= trialsPerVariant; k++) {
      binomial.push(coefficient / 2 ** trialsPerVariant);
      coefficient = (coefficient * (trialsPerVariant - k)) / (k + 1);
    }
    // Given the baseline's passes, the candidates are independent: P(some accepted) is
    // 1 − (1 − q)^10 with q the chance that one candidate is accepted.
    const familyRate = (decides: (passes: number, basePasses: number) => boolean) =>
      binomial.reduce((total, pBase, basePasses) => {
        const q = binomial.reduce(
          (sum, p, passes) => sum + (decides(passes, basePasses) ? p : 0),
          0,
        );
        return total + pBase * (1 - (1 - q) ** candidates.length);
      }, 0);
    const adjusted = familyRate((passes, basePasses) => {
      const trials = [
        ...records("base", basePasses),
        ...candidates.flatMap((name) => records(name, passes)),
      ];
      return decideVerdict(trials, paired).comparisons[0]?.status === "accept";
    });
    const unadjusted = familyRate(
      (passes, basePasses) =>
        decideVerdict([...records("c1", passes), ...records("base", basePasses)], paired).status ===
        "accept",
    );
    expect(adjusted).toBeLessThanOrEqual(alpha);
    expect(adjusted).toBeCloseTo(0.0093, 4);
    expect(unadjusted).toBeGreaterThan(alpha);
    expect(unadjusted).toBeCloseTo(0.0663, 4);
  });
});

describe("canStopEarly with several candidates", () => {
  const options = (variants: string[]) => ({
    baseline: "base",
    policy: DEFAULT_PAIRED_POLICY,
    plannedTrials: 8,
    variants,
    tasks: ["t"],
  });
  const now = [
    ...cell("base", "t", { failed: 6 }),
    ...cell("a", "t", { passed: 7 }),
    ...cell("b", "t", { failed: 6 }),
    ...cell("c", "t", { failed: 6 }),
  ];

  it("does not stop on a worst case that only the unadjusted interval would accept", () => {
    // Worst case for "a": 7/8 vs 2/8, above 0 at 95% but not at 1 − 0.05/3.
    const alone = canStopEarly(
      now.filter((t) => t.variant === "base" || t.variant === "a"),
      options(["base", "a"]),
    );
    expect(alone).toMatchObject({ canStop: true, status: "accept" });

    const family = canStopEarly(now, options(["a", "b", "base", "c"]));
    expect(family).toMatchObject({
      canStop: false,
      worstCase: "need_more_work",
      bestCase: "accept",
      remainingTrials: 7,
    });
    const worstCompletion = [
      ...now,
      ...cell("base", "t", { passed: 2, firstTrial: 7 }),
      ...cell("a", "t", { failed: 1, firstTrial: 8 }),
      ...cell("b", "t", { failed: 2, firstTrial: 7 }),
      ...cell("c", "t", { failed: 2, firstTrial: 7 }),
    ];
    expect(decideVerdict(worstCompletion, paired).status).toBe("need_more_work");
  });

  it("stops once the adjusted interval settles the verdict", () => {
    const decision = canStopEarly(
      [
        ...cell("base", "t", { failed: 8 }),
        ...cell("a", "t", { passed: 7 }),
        ...cell("b", "t", { failed: 8 }),
        ...cell("c", "t", { failed: 8 }),
      ],
      options(["a", "b", "base", "c"]),
    );
    // Worst case 7/8 vs 1/8 is still above 0 at 1 − 0.05/3.
    expect(fixedTest([table(7, 1)], 0.05 / 3).lower).toBeGreaterThan(0);
    expect(decision).toMatchObject({ canStop: true, status: "accept", remainingTrials: 1 });
  });
});

import { describe, expect, it } from "vitest";
import {
  binomialLowerTail,
  binomialUpperTail,
  canStopEarly,
  clopperPearsonLower,
  clopperPearsonUpper,
  DEFAULT_PAIRED_POLICY,
  decideVerdict,
  obrienFlemingSpending,
  sequentialSignTest,
  type TrialPair,
} from "../../src/stats/index.js";
import {
  roundMajorOrder,
  seededRandom,
  simulatedTrials,
  simulatedTrialsRelabelled,
} from "./support.js";

describe("binomial tails and Clopper–Pearson limits", () => {
  it("sums binomial probabilities exactly (scipy.stats.binom: sf(6; 20, 0.3), cdf(3; 20, 0.3))", () => {
    expect(binomialUpperTail(20, 7, 0.3)).toBeCloseTo(0.3919901877990756, 13);
    expect(binomialLowerTail(20, 3, 0.3)).toBeCloseTo(0.10708680450373087, 13);
    expect(binomialUpperTail(10, 0, 0.3)).toBe(1);
    expect(binomialUpperTail(10, 11, 0.3)).toBe(0);
  });

  // Newcombe RG (1998), Statistics in Medicine 17:857–872, Table I, method 5 (Clopper–Pearson, 95%).
  it.each([
    [81, 263, 0.2527, 0.3676],
    [15, 148, 0.0578, 0.1617],
    [0, 20, 0, 0.1684],
    [1, 29, 0.0009, 0.1776],
  ])("reproduces Newcombe's exact interval for %i of %i", (s, n, lower, upper) => {
    expect(clopperPearsonLower(s, n, 0.025)).toBeCloseTo(lower, 4);
    expect(clopperPearsonUpper(s, n, 0.025)).toBeCloseTo(upper, 4);
  });

  it("puts the lower limit above the pivot exactly when the one-sided test at the pivot rejects", () => {
    for (let n = 1; n <= 30; n++)
      for (let s = 0; s <= n; s++) {
        const tail = binomialUpperTail(n, s, 0.5);
        // The tail itself as the level: the boundary case, where rounding could put it either way.
        for (const level of [0.025, 0.001, Math.min(tail, 0.5)])
          expect(clopperPearsonLower(s, n, level, 0.5) > 0.5).toBe(tail <= level);
      }
  });
});

describe("O'Brien–Fleming-type spending (Lan and DeMets 1983)", () => {
  it("spends nothing at the start, everything at the end, and little early on", () => {
    expect(obrienFlemingSpending(0, 0.025)).toBe(0);
    expect(obrienFlemingSpending(1, 0.025)).toBeCloseTo(0.025, 14);
    // 2·(1 − Φ(z₀.₉₈₇₅/√t)), as computed with scipy.stats.norm.
    expect(obrienFlemingSpending(0.5, 0.025)).toBeCloseTo(0.0015253227579890005, 12);
    expect(obrienFlemingSpending(0.25, 0.025)).toBeCloseTo(7.366808435937955e-6, 14);
  });
});

/** Every sign sequence over `pattern` (true: the pair disagrees), with its null probability. */
function* signSequences(pattern: readonly boolean[]): Generator<[TrialPair[], number]> {
  const disagreements = pattern.filter(Boolean).length;
  for (let mask = 0; mask < 2 ** disagreements; mask++) {
    let bit = 0;
    const pairs = pattern.map((disagrees): TrialPair => {
      if (!disagrees) return { candidatePassed: true, baselinePassed: true };
      const won = ((mask >> bit++) & 1) === 1;
      return { candidatePassed: won, baselinePassed: !won };
    });
    yield [pairs, 2 ** -disagreements];
  }
}

describe("sequentialSignTest", () => {
  // Exact, not sampled: under "no task differs" every disagreement is a fair coin, so summing
  // over all sign sequences gives the false-accept probability for a given disagreement pattern.
  it.each([
    ["every pair disagrees", Array<boolean>(13).fill(true)],
    ["every other pair agrees", Array.from({ length: 24 }, (_, i) => i % 2 === 0)],
    ["disagreements only late", Array.from({ length: 18 }, (_, i) => i >= 6)],
  ])(
    "keeps the false-accept probability at most the side's alpha when %s (exact sum)",
    (_, pattern) => {
      let accept = 0;
      let reject = 0;
      for (const [pairs, probability] of signSequences(pattern)) {
        const result = sequentialSignTest(pairs, pattern.length, 0.025);
        if (result.decided === "up") accept += probability;
        if (result.decided === "down") reject += probability;
      }
      expect(accept).toBeLessThanOrEqual(0.025);
      expect(reject).toBeCloseTo(accept, 12);
      // It spends most of what it may: the design is not needlessly cautious.
      expect(accept).toBeGreaterThan(0.01);
    },
  );

  it("decides at the first look whose boundary is crossed, and the interval says the same", () => {
    const pairs: TrialPair[] = Array.from({ length: 40 }, () => ({
      candidatePassed: true,
      baselinePassed: false,
    }));
    const result = sequentialSignTest(pairs, 100, 0.025);
    expect(result.decided).toBe("up");
    expect(result.decidedAtPair).toBeLessThan(40);
    expect(result.look?.upperP).toBeLessThanOrEqual(result.look?.threshold ?? 0);
    expect(result.lower).toBeGreaterThan(0);
    expect(result.difference).toBe(1);
    // Wins after the decision change nothing: a crossing is final.
    expect(sequentialSignTest(pairs.slice(0, result.decidedAtPair ?? 0), 100, 0.025)).toEqual(
      result,
    );
  });

  it("keeps the interval around 0 until a boundary is crossed, for every prefix (interval and decision agree)", () => {
    const random = seededRandom(7);
    for (let run = 0; run < 30; run++) {
      const pairs: TrialPair[] = Array.from({ length: 60 }, () =>
        random() < 0.05
          ? null
          : { candidatePassed: random() < 0.6, baselinePassed: random() < 0.4 },
      );
      for (let length = 0; length <= pairs.length; length += 7) {
        const result = sequentialSignTest(pairs.slice(0, length), 60, 0.025);
        expect(result.lower > 0).toBe(result.decided === "up");
        expect(result.upper < 0).toBe(result.decided === "down");
        if (result.difference !== null) {
          expect(result.lower).toBeLessThanOrEqual(result.difference);
          expect(result.upper).toBeGreaterThanOrEqual(result.difference);
        }
      }
    }
  });

  it("refuses more pairs than planned", () => {
    expect(() => sequentialSignTest([null, null], 1, 0.025)).toThrow(RangeError);
  });
});

describe("the sequential design in the verdict", () => {
  const policy = { ...DEFAULT_PAIRED_POLICY, design: "sequential" as const };
  const design = { tasks: 6, trialsPerCell: 8, variants: ["base", "cand"] };
  const order = roundMajorOrder(design);

  it("accepts a clearly better candidate before the planned end and says which design decided", () => {
    const trials = simulatedTrials(design, { base: 0.2, cand: 0.9 }, seededRandom(3));
    const verdict = decideVerdict(trials, { baseline: "base", policy, order, plannedTrials: 8 });
    const [comparison] = verdict.comparisons;
    expect(verdict.status).toBe("accept");
    expect(comparison?.test?.design).toBe("sequential");
    expect(comparison?.interval?.method).toBe("sequential-sign");
    expect(comparison?.test?.sequential?.decidedAtPair).toBeLessThan(48);
    expect(comparison?.test?.pValue).toBeLessThanOrEqual(comparison?.test?.threshold ?? 0);
    expect(verdict.reason).toContain("sequential design");
    expect(verdict.reason).toMatch(/repeated CI \+0\.\d+ to/);
  });

  it("needs the planned order", () => {
    const trials = simulatedTrials(design, { base: 0.5, cand: 0.5 }, seededRandom(3));
    expect(() => decideVerdict(trials, { baseline: "base", policy })).toThrow(/planned order/);
  });

  it("does not accept, or stop, on the test that leaves infrastructure errors out when its twin counting them as failures has not crossed", () => {
    // Equal pass rates, every candidate failure recorded as an infrastructure error.
    const trials = simulatedTrialsRelabelled(
      design,
      { base: 0.5, cand: 0.5 },
      { cand: 1 },
      seededRandom(5),
    );
    const options = { baseline: "base", policy, order, plannedTrials: 8 };
    const verdict = decideVerdict(trials, options);
    const [comparison] = verdict.comparisons;
    expect(comparison?.test?.sequential?.decidedAtPair).not.toBeNull();
    expect(comparison?.interval?.lower).toBeGreaterThan(0);
    expect(comparison?.test?.sequential?.infraAsFailure?.decided).toBeNull();
    expect(comparison?.infraAsFailure.interval?.method).toBe("sequential-sign");
    expect(verdict.status).toBe("need_more_work");
    expect(verdict.reason).toContain("not once its infrastructure errors count as failures");
    // A run would go on: the twin may still cross at a later look.
    const prefix = trials.filter((t) => t.trial <= 6);
    const early = decideVerdict(prefix, options).comparisons[0]?.test?.sequential;
    expect(early?.decidedAtPair).not.toBeNull();
    expect(early?.infraAsFailure?.decided).toBeNull();
    const stop = canStopEarly(prefix, options);
    expect(stop.canStop).toBe(false);
  });

  it("ignores minTrials: the boundaries take its place", () => {
    const trials = simulatedTrials(design, { base: 0, cand: 1 }, seededRandom(3));
    const verdict = decideVerdict(trials, {
      baseline: "base",
      policy: { ...policy, minTrials: 100 },
      order,
      plannedTrials: 8,
    });
    expect(verdict.status).toBe("accept");
  });
});

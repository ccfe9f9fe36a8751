import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  canStopEarly,
  DEFAULT_PAIRED_POLICY,
  decideVerdict,
  type VerdictPolicy,
} from "../../src/stats/index.js";
import { cell, twoVariants } from "./support.js";

const options = (plannedTrials: number, policy: VerdictPolicy = DEFAULT_PAIRED_POLICY) => ({
  baseline: "H0",
  policy,
  plannedTrials,
});

describe("canStopEarly", () => {
  it("stops with accept when even failing every remaining candidate trial keeps the interval above 0", () => {
    // Worst case 6/7 vs 1/7: exact one-sided p = 50/3432 = 0.015, still accepted.
    const decision = canStopEarly(twoVariants({ passed: 6 }, { failed: 6 }), options(7));
    expect(decision).toMatchObject({
      canStop: true,
      status: "accept",
      worstCase: "accept",
      bestCase: "accept",
      remainingTrials: 2,
    });
    expect(decision.reason).toBe(
      "the verdict is accept whatever the 2 remaining trials show (worst and best case agree)",
    );
  });

  it("stops with reject when the candidate cannot catch up", () => {
    const decision = canStopEarly(twoVariants({ failed: 6 }, { passed: 6 }), options(7));
    expect(decision).toMatchObject({ canStop: true, status: "reject" });
  });

  it("keeps going while the remaining trials can still change the verdict", () => {
    const decision = canStopEarly(twoVariants({ passed: 5 }, { failed: 5 }), options(8));
    expect(decision).toMatchObject({
      canStop: false,
      status: null,
      worstCase: "need_more_work",
      bestCase: "accept",
      remainingTrials: 6,
    });
    expect(decision.reason).toBe(
      "the 6 remaining trials can still change the verdict: need_more_work if the candidates fail them all, accept if they pass them all",
    );
  });

  it("counts remaining trials toward minTrials: a run short of minTrials now can already be settled", () => {
    const policy = { ...DEFAULT_PAIRED_POLICY, minTrials: 7 };
    const trials = twoVariants({ passed: 6 }, { failed: 6 });
    expect(decideVerdict(trials, { baseline: "H0", policy }).status).toBe("need_more_work");
    expect(canStopEarly(trials, options(7, policy))).toMatchObject({
      canStop: true,
      status: "accept",
    });
  });

  it("stops with need_more_work when a too-expensive candidate can be neither accepted nor rejected", () => {
    const decision = canStopEarly(
      twoVariants({ passed: 5, costUsd: 0.2 }, { failed: 5, costUsd: 0.1 }),
      options(8),
    );
    expect(decision).toMatchObject({ canStop: true, status: "need_more_work" });
  });

  it("reports the final verdict once every planned trial is recorded", () => {
    const trials = twoVariants({ passed: 4, failed: 1 }, { passed: 1, failed: 4 });
    const decision = canStopEarly(trials, options(5));
    expect(decision).toMatchObject({ canStop: true, status: "need_more_work", remainingTrials: 0 });
    expect(decision.reason).toBe("every planned trial is recorded; the verdict is need_more_work");
  });

  it("counts a variant with no completed trial yet as still able to complete its remaining trials", () => {
    const decision = canStopEarly(twoVariants({ infra: 2 }, { passed: 2 }), options(5));
    expect(decision.canStop).toBe(false);
    expect(decision.worstCase).not.toBe("infrastructure_error");
    const done = canStopEarly(twoVariants({ infra: 5 }, { passed: 5 }), options(5));
    expect(done).toMatchObject({ canStop: true, status: "infrastructure_error" });
  });

  it("works for heuristic-v1 (remaining trials scored 0 on failure, 100 on success)", () => {
    const settled = canStopEarly(
      twoVariants({ passed: 5 }, { failed: 5 }),
      options(6, { kind: "heuristic-v1" }),
    );
    expect(settled).toMatchObject({ canStop: true, status: "accept" });
    const open = canStopEarly(
      twoVariants({ passed: 3, failed: 2 }, { passed: 2, failed: 3 }),
      options(7, { kind: "heuristic-v1" }),
    );
    expect(open).toMatchObject({ canStop: false, worstCase: "reject", bestCase: "accept" });
  });

  it("covers planned variants and tasks that have no records yet", () => {
    const decision = canStopEarly(cell("H0", "t1", { passed: 3 }), {
      ...options(3),
      variants: ["H0", "H1"],
      tasks: ["t1", "t2"],
    });
    expect(decision.remainingTrials).toBe(9);
    expect(decision.canStop).toBe(false);
  });

  it("refuses a planned trial count that is not a positive integer", () => {
    expect(() => canStopEarly([], options(0))).toThrow(RangeError);
  });

  it("never claims a settled verdict that some completion of the remaining trials would change (property)", () => {
    const scenario = fc.record({
      planned: fc.integer({ min: 1, max: 8 }),
      candidatePassed: fc.integer({ min: 0, max: 8 }),
      candidateFailed: fc.integer({ min: 0, max: 8 }),
      baselinePassed: fc.integer({ min: 0, max: 8 }),
      baselineFailed: fc.integer({ min: 0, max: 8 }),
      futureCandidatePasses: fc.nat(),
      futureBaselinePasses: fc.nat(),
      heuristic: fc.boolean(),
    });
    fc.assert(
      fc.property(scenario, (s) => {
        const candidateRecorded = Math.min(s.planned, s.candidatePassed + s.candidateFailed);
        const baselineRecorded = Math.min(s.planned, s.baselinePassed + s.baselineFailed);
        const candidatePassed = Math.min(s.candidatePassed, candidateRecorded);
        const baselinePassed = Math.min(s.baselinePassed, baselineRecorded);
        const policy: VerdictPolicy = s.heuristic
          ? { kind: "heuristic-v1" }
          : { ...DEFAULT_PAIRED_POLICY, minTrials: 3 };
        const now = twoVariants(
          { passed: candidatePassed, failed: candidateRecorded - candidatePassed },
          { passed: baselinePassed, failed: baselineRecorded - baselinePassed },
        );
        const grid = { variants: ["H0", "H1"], tasks: ["readme"] };
        const decision = canStopEarly(now, { ...options(s.planned, policy), ...grid });
        if (!decision.canStop) return true;
        const candidateLeft = s.planned - candidateRecorded;
        const baselineLeft = s.planned - baselineRecorded;
        const candidateMore = s.futureCandidatePasses % (candidateLeft + 1);
        const baselineMore = s.futureBaselinePasses % (baselineLeft + 1);
        const later = [
          ...now,
          ...cell("H1", "readme", {
            passed: candidateMore,
            failed: candidateLeft - candidateMore,
            firstTrial: candidateRecorded + 1,
            passScore: 100,
            failScore: 0,
          }),
          ...cell("H0", "readme", {
            passed: baselineMore,
            failed: baselineLeft - baselineMore,
            firstTrial: baselineRecorded + 1,
            passScore: 100,
            failScore: 0,
          }),
        ];
        return decideVerdict(later, { baseline: "H0", policy, ...grid }).status === decision.status;
      }),
      { numRuns: 300 },
    );
  });
});

import { describe, expect, it } from "vitest";
import { aggregate, type TrialRecord } from "../../src/stats/index.js";
import { cell } from "./support.js";

function record(
  overrides: Partial<TrialRecord> & Pick<TrialRecord, "trial" | "outcome">,
): TrialRecord {
  return {
    variant: "H1",
    task: "readme",
    score: overrides.outcome === "infrastructure_error" ? null : 50,
    costUsd: null,
    credits: null,
    tokens: null,
    turns: null,
    durationMs: null,
    ...overrides,
  };
}

const tokens = (n: number) => ({
  uncachedInput: n,
  cacheRead: 2 * n,
  cacheWrite: 3 * n,
  output: 4 * n,
  reasoning: 5 * n,
});

describe("aggregate", () => {
  const trials: TrialRecord[] = [
    record({
      trial: 1,
      outcome: "passed",
      score: 100,
      costUsd: 0.5,
      credits: 10,
      tokens: tokens(100),
      turns: 4,
      durationMs: 1000,
    }),
    record({
      trial: 2,
      outcome: "passed",
      score: 90,
      costUsd: 0.7,
      credits: 14,
      tokens: tokens(300),
      turns: 6,
      durationMs: 5000,
    }),
    record({
      trial: 3,
      outcome: "failed",
      score: 20,
      costUsd: 0.3,
      credits: null,
      tokens: null,
      turns: 2,
      durationMs: 2000,
    }),
    record({
      trial: 4,
      outcome: "infrastructure_error",
      costUsd: 0.1,
      credits: 1,
      tokens: tokens(10),
      turns: null,
      durationMs: 99,
    }),
  ];
  const [only] = aggregate(trials).cells;

  it("counts outcomes and gives the pass rate with infrastructure errors excluded and counted as failures", () => {
    expect(only).toMatchObject({ trials: 4, completed: 3, passed: 2, failed: 1, infraErrors: 1 });
    expect(only?.passRate.excludingInfra).toBeCloseTo(2 / 3, 14);
    expect(only?.passRate.infraAsFailure).toBe(0.5);
  });

  it("averages scores, turns and durations over completed trials only", () => {
    expect(only?.meanScore).toBeCloseTo(70, 12);
    expect(only?.meanTurns).toBe(4);
    expect(only?.duration).toEqual({
      meanMs: 8000 / 3,
      medianMs: 2000,
      completedTrialsReporting: 3,
    });
  });

  it("totals costs over every trial that reported one and averages them per completed trial", () => {
    expect(only?.costUsd?.total).toBeCloseTo(1.6, 12);
    expect(only?.costUsd?.trialsReporting).toBe(4);
    expect(only?.costUsd?.meanPerCompletedTrial).toBeCloseTo(0.5, 12);
    expect(only?.costUsd?.completedTrialsReporting).toBe(3);
    expect(only?.credits).toEqual({
      total: 25,
      trialsReporting: 3,
      meanPerCompletedTrial: 12,
      completedTrialsReporting: 2,
    });
  });

  it("sums and averages every token kind", () => {
    expect(only?.tokens?.total).toEqual(tokens(410));
    expect(only?.tokens?.meanPerCompletedTrial).toEqual(tokens(200));
    expect(only?.tokens?.trialsReporting).toBe(3);
  });

  it("reports unreported measurements as null, never as 0", () => {
    const [bare] = aggregate(cell("H1", "readme", { passed: 2, failed: 1 })).cells;
    expect(bare).toMatchObject({
      costUsd: null,
      credits: null,
      tokens: null,
      meanTurns: null,
      duration: null,
    });
    const [allInfra] = aggregate(cell("H1", "readme", { infra: 2 })).cells;
    expect(allInfra).toMatchObject({
      completed: 0,
      passRate: { excludingInfra: null, infraAsFailure: 0 },
      meanScore: null,
      passAtK: { excludingInfra: [] },
    });
  });

  it("takes the median of an odd and an even number of durations", () => {
    const durations = (ms: number[]) =>
      aggregate(ms.map((durationMs, i) => record({ trial: i + 1, outcome: "failed", durationMs })))
        .cells[0]?.duration?.medianMs;
    expect(durations([5, 1, 3])).toBe(3);
    expect(durations([4, 1, 3, 10])).toBe(3.5);
    expect(durations([7])).toBe(7);
  });

  it("gives pass@k and pass^k for k = 1..n both ways", () => {
    expect(only?.passAtK.excludingInfra.map((p) => p.k)).toEqual([1, 2, 3]);
    expect(only?.passAtK.excludingInfra[1]?.passAtK).toBe(1); // 2 of 3 passed: any 2 include a pass
    expect(only?.passAtK.excludingInfra[1]?.passHatK).toBeCloseTo(1 / 3, 14);
    expect(only?.passAtK.infraAsFailure.map((p) => p.k)).toEqual([1, 2, 3, 4]);
    expect(only?.passAtK.infraAsFailure[1]?.passAtK).toBeCloseTo(5 / 6, 14);
  });

  it("pools a variant over its tasks and also averages the tasks' pass rates", () => {
    const result = aggregate([
      ...cell("B", "easy", { passed: 4 }),
      ...cell("B", "hard", { passed: 1, failed: 1, infra: 2 }),
      ...cell("A", "easy", { passed: 1, failed: 3 }),
      ...cell("A", "hard", { failed: 4 }),
    ]);
    expect(result.variants.map((v) => v.variant)).toEqual(["A", "B"]);
    expect(result.cells.map((c) => `${c.variant}/${c.task}`)).toEqual([
      "A/easy",
      "A/hard",
      "B/easy",
      "B/hard",
    ]);
    const b = result.variants[1];
    expect(b).toMatchObject({
      tasks: 2,
      trials: 8,
      completed: 6,
      passed: 5,
      failed: 1,
      infraErrors: 2,
    });
    expect(b?.passRate.excludingInfra).toBeCloseTo(5 / 6, 14);
    expect(b?.taskMeanPassRate.excludingInfra).toBe(0.75);
    expect(b?.taskMeanPassRate.infraAsFailure).toBe(0.625);
    // pass@k per task averaged, up to the smallest task's n (2 completed on "hard").
    expect(b?.passAtK.excludingInfra).toEqual([
      { k: 1, passAtK: 0.75, passHatK: 0.75 },
      { k: 2, passAtK: 1, passHatK: 0.5 },
    ]);
  });

  it("keeps planned variants and tasks nobody ran as empty cells", () => {
    const result = aggregate(cell("A", "t1", { passed: 1 }), {
      variants: ["A", "B"],
      tasks: ["t1", "t2"],
    });
    expect(result.cells).toHaveLength(4);
    expect(result.cells.find((c) => c.variant === "B" && c.task === "t2")).toMatchObject({
      trials: 0,
      passRate: { excludingInfra: null, infraAsFailure: null },
    });
  });

  it("does not depend on the order the records arrive in", () => {
    const records = [
      ...cell("A", "t", { passed: 2, failed: 3, costUsd: 0.1 }),
      ...cell("B", "t", { passed: 1, costUsd: 0.3 }),
    ];
    expect(aggregate([...records].reverse())).toEqual(aggregate(records));
  });

  it("refuses a trial recorded twice and a record outside the planned grid", () => {
    const twice = [...cell("A", "t", { passed: 1 }), ...cell("A", "t", { failed: 1 })];
    expect(() => aggregate(twice)).toThrow(/recorded twice/);
    expect(() => aggregate(cell("C", "t", { passed: 1 }), { variants: ["A"] })).toThrow(
      /not planned/,
    );
  });
});

describe("pass-rate intervals", () => {
  it("gives each variant and cell a 95% Wilson interval over completed trials, infrastructure errors left out", () => {
    const trials: TrialRecord[] = [
      record({ trial: 1, outcome: "passed" }),
      record({ trial: 2, outcome: "passed" }),
      record({ trial: 3, outcome: "failed" }),
      record({ trial: 4, outcome: "infrastructure_error" }),
    ];
    const result = aggregate(trials);
    const interval = result.variants[0]?.passRateInterval;
    // Wilson 95% for 2 of 3: 0.2077 to 0.9385.
    expect(interval?.method).toBe("wilson");
    expect(interval?.level).toBe(0.95);
    expect(interval?.lower).toBeCloseTo(0.2077, 3);
    expect(interval?.upper).toBeCloseTo(0.9385, 3);
    expect(result.cells[0]?.passRateInterval).toEqual(interval);
  });

  it("is null when no trial completed, and reaches the boundary exactly at 0 or all passed", () => {
    expect(
      aggregate([record({ trial: 1, outcome: "infrastructure_error" })]).variants[0]
        ?.passRateInterval,
    ).toBeNull();
    const all = aggregate([record({ trial: 1, outcome: "passed" })]).variants[0]?.passRateInterval;
    expect(all?.upper).toBe(1);
    const none = aggregate([record({ trial: 1, outcome: "failed" })]).variants[0]?.passRateInterval;
    expect(none?.lower).toBe(0);
  });
});

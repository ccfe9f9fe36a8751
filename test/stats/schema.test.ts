import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  computeVerdictStatistics,
  DEFAULT_PAIRED_POLICY,
  decideVerdict,
  trialRecordSchema,
  verdictStatisticsSchema,
} from "../../src/stats/index.js";
import { jsonSchemas } from "../../src/stats/schemas.js";
import { cell } from "./support.js";

const trials = [
  ...cell("H0", "a", { passed: 2, failed: 2, infra: 1, costUsd: 0, credits: 3 }),
  ...cell("H1", "a", { passed: 4, infra: 1, costUsd: 0.2, credits: 4 }),
  ...cell("H0", "b", { failed: 3 }),
  ...cell("H1", "b", { infra: 3 }),
  ...cell("H2", "a", { passed: 1 }),
  ...cell("H2", "b", { failed: 1 }),
];

describe("verdict-statistics schema", () => {
  for (const policy of [DEFAULT_PAIRED_POLICY, { kind: "heuristic-v1" as const }]) {
    it(`describes what computeVerdictStatistics returns, through JSON (${policy.kind})`, () => {
      const statistics = computeVerdictStatistics(trials, { baseline: "H0", policy });
      const roundTripped = JSON.parse(JSON.stringify(statistics));
      expect(roundTripped).toEqual(statistics);
      const parsed = verdictStatisticsSchema.safeParse(roundTripped);
      expect(parsed.success, JSON.stringify(parsed.error?.issues.slice(0, 3))).toBe(true);
    });
  }

  it("embeds the same verdict decideVerdict gives, plus the aggregates", () => {
    const options = { baseline: "H0", policy: DEFAULT_PAIRED_POLICY };
    const { aggregates, ...verdict } = computeVerdictStatistics(trials, options);
    expect(verdict).toEqual(decideVerdict(trials, options));
    expect(aggregates.variants.map((v) => v.variant)).toEqual(["H0", "H1", "H2"]);
  });

  it("rejects a document with an unknown field or an infinite number", () => {
    const statistics = computeVerdictStatistics(trials, {
      baseline: "H0",
      policy: DEFAULT_PAIRED_POLICY,
    });
    expect(verdictStatisticsSchema.safeParse({ ...statistics, extra: 1 }).success).toBe(false);
    const broken = structuredClone(statistics);
    (broken.comparisons[0] as { difference: number }).difference = Number.POSITIVE_INFINITY;
    expect(verdictStatisticsSchema.safeParse(broken).success).toBe(false);
  });

  it("is published as verdict-statistics and renders as JSON Schema", () => {
    expect(Object.keys(jsonSchemas)).toEqual(["verdict-statistics"]);
    const document = z.toJSONSchema(jsonSchemas["verdict-statistics"] as z.ZodType, {
      target: "draft-2020-12",
    });
    expect(document).toMatchObject({ type: "object", additionalProperties: false });
  });

  it("validates trial records from the runner", () => {
    expect(trialRecordSchema.safeParse(trials[0]).success).toBe(true);
    expect(trialRecordSchema.safeParse({ ...trials[0], trial: 0 }).success).toBe(false);
    expect(trialRecordSchema.safeParse({ ...trials[0], score: 101 }).success).toBe(false);
  });
});

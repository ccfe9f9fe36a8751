import { describe, expect, it } from "vitest";
import {
  type ScoringSpec,
  type Submission,
  score,
  scoringResultSchema,
} from "../../src/scoring/index.js";
import { issue, repo } from "./builders.js";

const mutationSpec: ScoringSpec = {
  kind: "mutation",
  expected: repo({ issues: [issue(1, { state: "closed" })] }),
};
const readSpec: ScoringSpec = {
  kind: "read",
  facts: [{ description: "the number", anyOf: ["#1"] }],
};

describe("score", () => {
  it("scores a mutation submission with checkMutation", () => {
    expect(score(mutationSpec, { kind: "mutation", state: mutationSpec.expected })).toEqual({
      kind: "mutation",
      pass: true,
    });
    const failed = score(mutationSpec, { kind: "mutation", state: repo({ issues: [issue(1)] }) });
    expect(failed).toMatchObject({
      kind: "mutation",
      pass: false,
      differences: [
        { path: "issues[number=1].state", message: 'issue #1: state is "open", expected "closed"' },
      ],
    });
  });

  it("scores a read submission with checkReadAnswer", () => {
    expect(score(readSpec, { kind: "read", report: "Closed #1." })).toMatchObject({
      kind: "read",
      pass: true,
    });
    expect(score(readSpec, { kind: "read", report: "Closed #10." })).toMatchObject({
      kind: "read",
      pass: false,
      missing: [{ index: 0, description: "the number" }],
    });
  });

  it("returns documents that match the published scoring-result schema", () => {
    const submissions: [ScoringSpec, Submission][] = [
      [mutationSpec, { kind: "mutation", state: mutationSpec.expected }],
      [mutationSpec, { kind: "mutation", state: repo() }],
      [readSpec, { kind: "read", report: "#1" }],
      [readSpec, { kind: "read", report: "" }],
    ];
    for (const [spec, submission] of submissions) {
      const parsed = scoringResultSchema.safeParse(score(spec, submission));
      expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
    }
  });

  it("throws a clear error when the submission's kind does not match the spec's", () => {
    expect(() => score(mutationSpec, { kind: "read", report: "x" })).toThrow(
      "score: a mutation spec cannot score a read submission",
    );
    expect(() => score(readSpec, { kind: "mutation", state: repo() })).toThrow(
      "score: a read spec cannot score a mutation submission",
    );
  });
});

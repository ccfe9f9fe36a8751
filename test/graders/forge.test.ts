import { describe, expect, it } from "vitest";
import {
  createForgeStateGrader,
  createReadFactsGrader,
  type GradeContext,
} from "../../src/graders/index.js";
import { createUnsandboxed } from "../../src/sandbox/index.js";
import type { RepoState } from "../../src/scoring/index.js";

const EXPECTED: RepoState = {
  labels: [{ name: "bug", color: "#d73a4a" }],
  issues: [{ number: 1, title: "Crash", state: "closed", labels: ["bug"] }],
};

function context(fields: Partial<GradeContext>): GradeContext {
  return {
    trialRoot: "/nonexistent",
    changedFiles: [],
    expectedFiles: [],
    finalText: "",
    scratchDir: "/nonexistent",
    // No command runs: these graders read values only.
    sandbox: createUnsandboxed(),
    ...fields,
  };
}

describe("the forge-state grader", () => {
  it("passes when the captured state is the expected one", async () => {
    const grade = await createForgeStateGrader({ expected: EXPECTED }).grade(
      context({ forgeState: structuredClone(EXPECTED) }),
    );
    expect(grade).toMatchObject({ grader: "forge-state", passed: true, score: 100 });
  });

  it("makes each difference a failed check, the missing change before the collateral one", async () => {
    const grade = await createForgeStateGrader({ expected: EXPECTED }).grade(
      context({
        forgeState: {
          labels: [{ name: "bug", color: "#d73a4a" }],
          issues: [
            {
              number: 1,
              title: "Crash",
              state: "open",
              labels: ["bug"],
              comments: [{ author: "agent", body: "closing" }],
            },
          ],
        },
      }),
    );
    expect(grade.passed).toBe(false);
    expect(grade.score).toBe(0);
    expect(grade.checks.map((c) => [c.id, c.passed])).toEqual([
      ["changed:issues[number=1].state", false],
      ["collateral:issues[number=1].comments", false],
    ]);
    expect(grade.summary).toBe(
      'not done: issue #1: state is "open", expected "closed" | collateral: issue #1: unexpected comment by agent (collateral change): "closing"',
    );
  });

  it("gives repeated differences at one path distinct check ids", async () => {
    const grade = await createForgeStateGrader({ expected: EXPECTED }).grade(
      context({
        forgeState: {
          labels: [{ name: "bug", color: "#d73a4a" }],
          issues: [
            {
              number: 1,
              title: "Crash",
              state: "closed",
              labels: ["bug"],
              comments: [
                { author: "agent", body: "a" },
                { author: "agent", body: "b" },
              ],
            },
          ],
        },
      }),
    );
    expect(grade.checks.map((c) => c.id)).toEqual([
      "collateral:issues[number=1].comments",
      "collateral:issues[number=1].comments#2",
    ]);
  });

  it("refuses to grade a trial whose state was never captured (the harness's fault)", async () => {
    await expect(createForgeStateGrader({ expected: EXPECTED }).grade(context({}))).rejects.toThrow(
      /no forge state was captured/,
    );
  });
});

describe("the read-facts grader", () => {
  const facts = [
    { description: "the open bug count", anyOf: ["3 open bugs"] },
    { description: "the oldest issue", anyOf: ["#4"] },
  ];

  it("passes when every fact is stated, one check per fact", async () => {
    const grade = await createReadFactsGrader({ facts }).grade(
      context({ finalText: "There are **3 open bugs**; the oldest is #4." }),
    );
    expect(grade).toMatchObject({ grader: "read-facts", passed: true, score: 100 });
    expect(grade.checks.map((c) => [c.id, c.passed])).toEqual([
      ["fact-1", true],
      ["fact-2", true],
    ]);
  });

  it("names the facts the report misses, and a longer number is not the fact", async () => {
    const grade = await createReadFactsGrader({ facts }).grade(
      context({ finalText: "There are 3 open bugs; the oldest is #42." }),
    );
    expect(grade.passed).toBe(false);
    expect(grade.score).toBe(50);
    expect(grade.summary).toBe("missing from the report: the oldest issue");
  });
});

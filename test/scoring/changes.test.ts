import { describe, expect, it } from "vitest";
import {
  applyIntendedChanges,
  checkMutation,
  type IntendedChange,
  intendedChangesSchema,
  type RepoState,
} from "../../src/scoring/index.js";
import { clone, comment, issue, label, pullRequest, repo, review } from "./builders.js";

const SEED: RepoState = repo({
  labels: [label("bug"), label("duplicate", "#cccccc")],
  issues: [
    issue(1, { title: "Crash on start", labels: ["bug"], assignees: ["alice"] }),
    issue(2, { title: "Old", state: "closed" }),
  ],
  pullRequests: [
    pullRequest(3, { title: "Fix crash" }),
    pullRequest(4, { title: "Done", state: "merged" }),
  ],
});

function apply(changes: IntendedChange[], seed = SEED) {
  return applyIntendedChanges(seed, changes, "agent", ["changes"]);
}

function problemsOf(changes: IntendedChange[]): string[] {
  const result = apply(changes);
  expect(result.ok).toBe(false);
  return result.ok ? [] : result.problems.map((p) => `${p.path}: ${p.message}`);
}

describe("applyIntendedChanges", () => {
  it("turns the seed into the whole expected state: the intended changes and nothing else", () => {
    const result = apply([
      { op: "comment", number: 1, body: "Looking into it" },
      { op: "add-label", number: 3, label: "bug" },
      { op: "remove-label", number: 1, label: "bug" },
      { op: "assign", number: 3, user: "agent" },
      { op: "unassign", number: 1, user: "alice" },
      { op: "close", number: 1 },
      { op: "reopen", number: 2 },
      { op: "edit", number: 2, title: "Old, revisited" },
      { op: "review", number: 3, kind: "approved", comments: [{ body: "nice" }] },
      { op: "merge", number: 3 },
    ]);
    expect(result).toEqual({
      ok: true,
      state: repo({
        labels: [label("bug"), label("duplicate", "#cccccc")],
        issues: [
          issue(1, {
            title: "Crash on start",
            state: "closed",
            comments: [comment("agent", "Looking into it")],
          }),
          issue(2, { title: "Old, revisited", state: "open" }),
        ],
        pullRequests: [
          pullRequest(3, {
            title: "Fix crash",
            state: "merged",
            labels: ["bug"],
            assignees: ["agent"],
            reviews: [review("agent", "approved", "", [comment("agent", "nice")])],
          }),
          pullRequest(4, { title: "Done", state: "merged" }),
        ],
      }),
    });
  });

  it("numbers a created issue after every issue and pull request (one number space)", () => {
    const result = apply([
      { op: "create-issue", title: "First", labels: ["bug"] },
      { op: "create-issue", title: "Second" },
    ]);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.state.issues?.map((i) => [i.number, i.title, i.labels])).toEqual([
      [1, "Crash on start", ["bug"]],
      [2, "Old", []],
      [5, "First", ["bug"]],
      [6, "Second", []],
    ]);
  });

  it("leaves the seed untouched", () => {
    const before = clone(SEED);
    apply([{ op: "close", number: 1 }]);
    expect(SEED).toEqual(before);
  });

  it("names every change that cannot apply, with its path and what exists", () => {
    expect(
      problemsOf([
        { op: "comment", number: 9, body: "x" },
        { op: "add-label", number: 1, label: "wontfix" },
        { op: "add-label", number: 1, label: "bug" },
        { op: "close", number: 2 },
        { op: "close", number: 4 },
        { op: "merge", number: 1 },
        { op: "review", number: 2, kind: "approved" },
        { op: "review", number: 3, kind: "request-changes" },
        { op: "edit", number: 1 },
        { op: "create-issue", title: "x", labels: ["nope"] },
      ]),
    ).toEqual([
      "changes[0].number: there is no issue or pull request #9 in the seed (numbers used: 1–4)",
      'changes[1].label: label "wontfix" is not defined in the seed\'s labels (defined: bug, duplicate)',
      'changes[2]: issue #1 already has label "bug": this change changes nothing (the task would pass without an agent)',
      "changes[3]: issue #2 is already closed: this change changes nothing (the task would pass without an agent)",
      "changes[4]: pull request #4 is merged; a merged pull request cannot be closed",
      "changes[5].number: issue #1 is an issue; only pull requests are merged",
      "changes[6].number: issue #2 is an issue; only pull requests are reviewed",
      "changes[7].body: a request-changes review needs a body (forges refuse it)",
      "changes[8]: give a new title, a new body, or both",
      'changes[9].labels: label "nope" is not defined in the seed\'s labels (defined: bug, duplicate)',
    ]);
  });

  it("scores the seed itself as missing exactly the intended change", () => {
    const result = apply([{ op: "add-label", number: 3, label: "duplicate" }]);
    if (!result.ok) throw new Error("expected the change to apply");
    const check = checkMutation(result.state, SEED);
    expect(check.pass).toBe(false);
    if (check.pass) return;
    expect(check.differences.map((d) => [d.path, d.kind, d.collateral])).toEqual([
      ["pullRequests[number=3].labels", "missing", false],
    ]);
  });

  it("rejects unknown operations and fields in the change list", () => {
    expect(intendedChangesSchema.safeParse([{ op: "delete", number: 1 }]).success).toBe(false);
    expect(intendedChangesSchema.safeParse([{ op: "close", number: 1, why: "x" }]).success).toBe(
      false,
    );
    expect(intendedChangesSchema.safeParse([]).success).toBe(false);
  });
});

import { describe, expect, it } from "vitest";
import {
  checkMutation,
  type Difference,
  type MutationCheck,
  type RepoState,
  scoringResultSchema,
} from "../../src/scoring/index.js";
import { clone, comment, issue, label, pullRequest, repo, review } from "./builders.js";

function differencesOf(result: MutationCheck): Difference[] {
  expect(result.pass).toBe(false);
  return result.pass ? [] : result.differences;
}

function diff(expected: RepoState, actual: RepoState): Difference[] {
  return differencesOf(checkMutation(expected, actual));
}

const base = repo({
  labels: [label("bug", "#d73a4a", "Something isn't working"), label("docs", "#0075ca")],
  issues: [
    issue(7, {
      title: "Crash",
      labels: ["bug"],
      assignees: ["alice"],
      comments: [comment("bob", "same here")],
    }),
    issue(12, { title: "Typo", body: "recieve" }),
  ],
  pullRequests: [
    pullRequest(3, {
      reviews: [review("carol", "request-changes", "please fix", [comment("carol", "here")])],
    }),
  ],
});

describe("checkMutation", () => {
  it("passes when the actual state equals the expected state", () => {
    expect(checkMutation(base, clone(base))).toEqual({ pass: true });
  });

  it("passes for two empty states", () => {
    expect(checkMutation({}, {})).toEqual({ pass: true });
  });

  describe("label definitions, matched by name", () => {
    it("reports a missing label definition", () => {
      const actual = clone(base);
      actual.labels!.splice(1, 1);
      expect(diff(base, actual)).toEqual([
        {
          path: 'labels[name="docs"]',
          kind: "missing",
          collateral: false,
          expected: { name: "docs", color: "#0075ca", description: "" },
          message: 'repository label "docs" missing',
        },
      ]);
    });

    it("reports an unexpected label definition as collateral", () => {
      const actual = clone(base);
      actual.labels!.push(label("temp", "FBCA04"));
      expect(diff(base, actual)).toEqual([
        {
          path: 'labels[name="temp"]',
          kind: "unexpected",
          collateral: true,
          actual: { name: "temp", color: "#fbca04", description: "" },
          message: 'unexpected repository label "temp" (collateral change)',
        },
      ]);
    });

    it("shows both colours when a colour differs", () => {
      const actual = clone(base);
      actual.labels![0]!.color = "#FF0000";
      expect(diff(base, actual)).toEqual([
        {
          path: 'labels[name="bug"].color',
          kind: "changed",
          collateral: false,
          expected: "#d73a4a",
          actual: "#ff0000",
          message: 'repository label "bug": colour is #ff0000, expected #d73a4a',
        },
      ]);
    });

    it('compares descriptions with an absent one meaning ""', () => {
      const actual = clone(base);
      delete actual.labels![0]!.description;
      actual.labels![1]!.description = "Docs";
      expect(diff(base, actual).map((d) => [d.path, d.expected, d.actual, d.message])).toEqual([
        [
          'labels[name="bug"].description',
          "Something isn't working",
          "",
          `repository label "bug": description is "", expected "Something isn't working"`,
        ],
        [
          'labels[name="docs"].description',
          "",
          "Docs",
          'repository label "docs": description is "Docs", expected ""',
        ],
      ]);
    });

    it("treats label names as case-sensitive", () => {
      const actual = clone(base);
      actual.labels![0]!.name = "Bug";
      expect(diff(base, actual).map((d) => [d.kind, d.path])).toEqual([
        ["unexpected", 'labels[name="Bug"]'],
        ["missing", 'labels[name="bug"]'],
      ]);
    });
  });

  describe("issues and pull requests, matched by number", () => {
    it("reports a missing issue with the whole expected issue", () => {
      const actual = clone(base);
      actual.issues!.pop();
      const [difference] = diff(base, actual);
      expect(difference).toMatchObject({
        path: "issues[number=12]",
        kind: "missing",
        collateral: false,
        message: 'issue #12 missing (expected "Typo")',
      });
      expect(difference!.expected).toMatchObject({ number: 12, title: "Typo", body: "recieve" });
    });

    it("reports an unexpected issue as collateral", () => {
      const actual = clone(base);
      actual.issues!.push(issue(13, { title: "Spam" }));
      expect(diff(base, actual)).toMatchObject([
        {
          path: "issues[number=13]",
          kind: "unexpected",
          collateral: true,
          message: 'unexpected issue #13 "Spam" (collateral change)',
        },
      ]);
    });

    it("reports missing and unexpected pull requests under pullRequests", () => {
      const actual = clone(base);
      actual.pullRequests = [pullRequest(4, { title: "New" })];
      expect(diff(base, actual).map((d) => [d.path, d.kind, d.collateral, d.message])).toEqual([
        [
          "pullRequests[number=3]",
          "missing",
          false,
          'pull request #3 missing (expected "Pull request 3")',
        ],
        [
          "pullRequests[number=4]",
          "unexpected",
          true,
          'unexpected pull request #4 "New" (collateral change)',
        ],
      ]);
    });

    it("does not match an issue with a pull request of the same number", () => {
      const expected = repo({ issues: [issue(5)] });
      const actual = repo({ pullRequests: [pullRequest(5, { title: "Issue 5" })] });
      expect(diff(expected, actual).map((d) => d.path)).toEqual([
        "issues[number=5]",
        "pullRequests[number=5]",
      ]);
    });

    it("compares title, body and state as strings and names both values", () => {
      const actual = clone(base);
      Object.assign(actual.issues![1]!, { title: "Typo!", body: "receive", state: "closed" });
      expect(diff(base, actual)).toEqual([
        {
          path: "issues[number=12].title",
          kind: "changed",
          collateral: false,
          expected: "Typo",
          actual: "Typo!",
          message: 'issue #12: title is "Typo!", expected "Typo"',
        },
        {
          path: "issues[number=12].body",
          kind: "changed",
          collateral: false,
          expected: "recieve",
          actual: "receive",
          message: 'issue #12: body is "receive", expected "recieve"',
        },
        {
          path: "issues[number=12].state",
          kind: "changed",
          collateral: false,
          expected: "open",
          actual: "closed",
          message: 'issue #12: state is "closed", expected "open"',
        },
      ]);
    });

    it("tells merged from closed for a pull request", () => {
      const expected = repo({ pullRequests: [pullRequest(3, { state: "merged" })] });
      const actual = repo({ pullRequests: [pullRequest(3, { state: "closed" })] });
      expect(diff(expected, actual)[0]!.message).toBe(
        'pull request #3: state is "closed", expected "merged"',
      );
    });

    it("points at the first differing line and column of a long body", () => {
      const long = `${"intro line\n".repeat(10)}the fix goes in parser.ts\n${"tail\n".repeat(10)}`;
      const expected = repo({ issues: [issue(1, { body: long })] });
      const actual = repo({ issues: [issue(1, { body: long.replace("parser.ts", "lexer.ts") })] });
      expect(diff(expected, actual)[0]!.message).toBe(
        'issue #1: body differs from line 11, column 17: "…lexer.ts\\ntail\\ntail\\ntail\\ntail\\ntail\\ntail\\n…", expected "…parser.ts\\ntail\\ntail\\ntail\\ntail\\ntail\\ntail…"',
      );
    });
  });

  describe("labels and assignees of an entity, compared as sets", () => {
    it('names a missing label: issue #12: label "bug" missing', () => {
      const expected = clone(base);
      expected.issues![1]!.labels = ["bug", "docs"];
      const actual = clone(base);
      actual.issues![1]!.labels = ["docs"];
      expect(diff(expected, actual)).toEqual([
        {
          path: "issues[number=12].labels",
          kind: "missing",
          collateral: false,
          expected: "bug",
          message: 'issue #12: label "bug" missing',
        },
      ]);
    });

    it("names an extra label as collateral", () => {
      const actual = clone(base);
      actual.issues![0]!.labels = ["bug", "wontfix"];
      expect(diff(base, actual)).toEqual([
        {
          path: "issues[number=7].labels",
          kind: "unexpected",
          collateral: true,
          actual: "wontfix",
          message: 'issue #7: unexpected label "wontfix" (collateral change)',
        },
      ]);
    });

    it("ignores order and repetition", () => {
      const expected = repo({ issues: [issue(1, { labels: ["a", "b"], assignees: ["x", "y"] })] });
      const actual = repo({
        issues: [issue(1, { labels: ["b", "a", "b"], assignees: ["y", "x", "x"] })],
      });
      expect(checkMutation(expected, actual)).toEqual({ pass: true });
    });

    it("names missing and extra assignees", () => {
      const actual = clone(base);
      actual.issues![0]!.assignees = ["dave"];
      expect(diff(base, actual).map((d) => [d.kind, d.collateral, d.message])).toEqual([
        ["missing", false, "issue #7: assignee alice missing"],
        ["unexpected", true, "issue #7: unexpected assignee dave (collateral change)"],
      ]);
    });
  });

  describe("comments, a multiset keyed on (author, body)", () => {
    it("reports an unexpected comment as collateral: issue #7: unexpected comment by alice", () => {
      const actual = clone(base);
      actual.issues![0]!.comments!.push(comment("alice", "me too"));
      expect(diff(base, actual)).toEqual([
        {
          path: "issues[number=7].comments",
          kind: "unexpected",
          collateral: true,
          actual: { author: "alice", body: "me too" },
          message: 'issue #7: unexpected comment by alice (collateral change): "me too"',
        },
      ]);
    });

    it("reports a missing comment", () => {
      const actual = clone(base);
      actual.issues![0]!.comments = [];
      expect(diff(base, actual)).toEqual([
        {
          path: "issues[number=7].comments",
          kind: "missing",
          collateral: false,
          expected: { author: "bob", body: "same here" },
          message: 'issue #7: comment by bob missing: "same here"',
        },
      ]);
    });

    it("counts repeated comments", () => {
      const expected = repo({
        issues: [issue(1, { comments: [comment("a", "+1"), comment("a", "+1")] })],
      });
      const actual = repo({ issues: [issue(1, { comments: [comment("a", "+1")] })] });
      expect(diff(expected, actual).map((d) => d.kind)).toEqual(["missing"]);
      expect(diff(actual, expected).map((d) => d.kind)).toEqual(["unexpected"]);
    });

    it("treats the same body by another author as a different comment", () => {
      const expected = repo({ issues: [issue(1, { comments: [comment("a", "ok")] })] });
      const actual = repo({ issues: [issue(1, { comments: [comment("b", "ok")] })] });
      expect(diff(expected, actual).map((d) => d.message)).toEqual([
        'issue #1: comment by a missing: "ok"',
        'issue #1: unexpected comment by b (collateral change): "ok"',
      ]);
    });

    it("reports an edited comment as the old one missing and the new one unexpected", () => {
      const actual = clone(base);
      actual.issues![0]!.comments![0]!.body = "same here!";
      expect(diff(base, actual).map((d) => [d.kind, d.path])).toEqual([
        ["missing", "issues[number=7].comments"],
        ["unexpected", "issues[number=7].comments"],
      ]);
    });

    it("matches comments whose line endings differ even where that changes their sort order", () => {
      // "\r" sorts after "\v" but "\n" before it, so the raw order of these bodies
      // differs from their normalized order.
      const expected = repo({
        issues: [issue(1, { comments: [comment("a", "x\ny"), comment("a", "x\vz")] })],
      });
      const actual = repo({
        issues: [issue(1, { comments: [comment("a", "x\vz"), comment("a", "x\r\ny")] })],
      });
      expect(checkMutation(expected, actual)).toEqual({ pass: true });
      expect(checkMutation(actual, expected)).toEqual({ pass: true });
      actual.issues![0]!.comments![0]!.body = "x\vZ";
      expect(diff(expected, actual).map((d) => d.kind)).toEqual(["missing", "unexpected"]);
    });

    it("ignores comment order", () => {
      const comments = [comment("a", "1"), comment("b", "2"), comment("a", "0")];
      expect(
        checkMutation(
          repo({ issues: [issue(1, { comments })] }),
          repo({ issues: [issue(1, { comments: [...comments].reverse() })] }),
        ),
      ).toEqual({ pass: true });
    });
  });

  describe("reviews, a multiset keyed on (author, kind, body, inline comments)", () => {
    it("ignores the order of reviews and of their inline comments", () => {
      const expected = repo({
        pullRequests: [
          pullRequest(3, {
            reviews: [
              review("a", "approved", "ok", [comment("a", "1"), comment("b", "2")]),
              review("c", "comment"),
            ],
          }),
        ],
      });
      const actual = repo({
        pullRequests: [
          pullRequest(3, {
            reviews: [
              review("c", "comment"),
              review("a", "approved", "ok", [comment("b", "2"), comment("a", "1")]),
            ],
          }),
        ],
      });
      expect(checkMutation(expected, actual)).toEqual({ pass: true });
    });

    it("reports a review whose kind changed as missing plus an unexpected one", () => {
      const actual = clone(base);
      actual.pullRequests![0]!.reviews![0]!.kind = "approved";
      expect(diff(base, actual)).toEqual([
        {
          path: "pullRequests[number=3].reviews",
          kind: "missing",
          collateral: false,
          expected: {
            author: "carol",
            kind: "request-changes",
            body: "please fix",
            comments: [{ author: "carol", body: "here" }],
          },
          message:
            'pull request #3: review by carol (request-changes, 1 inline comment: carol "here") missing: "please fix"',
        },
        {
          path: "pullRequests[number=3].reviews",
          kind: "unexpected",
          collateral: true,
          actual: {
            author: "carol",
            kind: "approved",
            body: "please fix",
            comments: [{ author: "carol", body: "here" }],
          },
          message:
            'pull request #3: unexpected review by carol (approved, 1 inline comment: carol "here") (collateral change): "please fix"',
        },
      ]);
    });

    it("detects a change in a review's inline comments", () => {
      const actual = clone(base);
      actual.pullRequests![0]!.reviews![0]!.comments!.push(comment("carol", "and here"));
      expect(diff(base, actual).map((d) => [d.kind, d.path])).toEqual([
        ["missing", "pullRequests[number=3].reviews"],
        ["unexpected", "pullRequests[number=3].reviews"],
      ]);
    });

    it("reports an extra review as collateral", () => {
      const actual = clone(base);
      actual.pullRequests![0]!.reviews!.push(review("agent", "approved"));
      expect(diff(base, actual)).toMatchObject([
        {
          kind: "unexpected",
          collateral: true,
          message: "pull request #3: unexpected review by agent (approved) (collateral change)",
        },
      ]);
    });
  });

  it("lists differences in a stable order: labels, issues, pull requests; fields in a fixed order; missing before unexpected", () => {
    const actual = clone(base);
    actual.labels = [label("zzz"), label("bug", "#000000", "Something isn't working")];
    actual.issues = [
      issue(13),
      issue(12, {
        title: "T",
        body: "B",
        state: "closed",
        labels: ["x"],
        assignees: ["y"],
        comments: [comment("c", "d")],
      }),
      issue(7, { title: "Crash", labels: ["z"], assignees: ["alice"], comments: [] }),
    ];
    actual.pullRequests = [];
    const paths = diff(base, actual).map((d) => `${d.kind} ${d.path}`);
    expect(paths).toEqual([
      'changed labels[name="bug"].color',
      'missing labels[name="docs"]',
      'unexpected labels[name="zzz"]',
      "missing issues[number=7].labels",
      "unexpected issues[number=7].labels",
      "missing issues[number=7].comments",
      "changed issues[number=12].title",
      "changed issues[number=12].body",
      "changed issues[number=12].state",
      "unexpected issues[number=12].labels",
      "unexpected issues[number=12].assignees",
      "unexpected issues[number=12].comments",
      "unexpected issues[number=13]",
      "missing pullRequests[number=3]",
    ]);
    // The same inputs in another order give the same list.
    const shuffled = clone(actual);
    shuffled.issues!.reverse();
    shuffled.labels!.reverse();
    expect(diff(base, shuffled).map((d) => `${d.kind} ${d.path}`)).toEqual(paths);
  });

  it("marks exactly the unexpected differences as collateral", () => {
    const actual = clone(base);
    actual.labels!.push(label("new"));
    actual.issues![0]!.labels = ["docs"];
    actual.issues![1]!.title = "changed";
    for (const difference of diff(base, actual))
      expect(difference.collateral).toBe(difference.kind === "unexpected");
  });

  it("returns results that match the published scoring-result schema", () => {
    const actual = clone(base);
    actual.issues!.push(issue(99));
    actual.issues![0]!.comments = [];
    for (const result of [checkMutation(base, actual), checkMutation(base, base)])
      expect(scoringResultSchema.safeParse({ kind: "mutation", ...result }).success).toBe(true);
  });

  it("throws on a state that uses an issue number twice", () => {
    expect(() => checkMutation(repo({ issues: [issue(1), issue(1)] }), repo())).toThrow(
      /number 1 is used twice/,
    );
    expect(() =>
      checkMutation(repo(), repo({ issues: [issue(2)], pullRequests: [pullRequest(2)] })),
    ).toThrow(/number 2 is used twice/);
  });

  it("does not modify its inputs", () => {
    const expected = clone(base);
    const actual = clone(base);
    actual.issues!.reverse();
    actual.issues![0]!.labels = ["b", "a"];
    const snapshot = clone(actual);
    checkMutation(expected, actual);
    expect(actual).toEqual(snapshot);
    expect(expected).toEqual(base);
  });
});

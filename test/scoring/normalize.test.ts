import { describe, expect, it } from "vitest";
import { checkMutation, normalizeRepoState } from "../../src/scoring/index.js";
import { clone, comment, issue, label, pullRequest, repo, review } from "./builders.js";

describe("normalizeRepoState", () => {
  it.each(["D73A4A", "d73a4a", "#D73A4A", "#d73a4a", "#D73a4A"])(
    "writes the label colour %s as lower-case hex with a leading #",
    (color) => {
      expect(normalizeRepoState({ labels: [{ name: "bug", color }] }).labels[0]!.color).toBe(
        "#d73a4a",
      );
    },
  );

  it("turns absent arrays into empty ones at every level", () => {
    const normalized = normalizeRepoState({
      issues: [{ number: 1, title: "t", state: "open" }],
      pullRequests: [
        {
          number: 2,
          title: "p",
          state: "merged",
          reviews: [{ author: "bob", kind: "approved" }],
        },
      ],
    });
    expect(normalized.labels).toEqual([]);
    expect(normalized.issues[0]).toMatchObject({ labels: [], assignees: [], comments: [] });
    expect(normalized.pullRequests[0]).toMatchObject({
      labels: [],
      assignees: [],
      comments: [],
      reviews: [{ author: "bob", kind: "approved", body: "", comments: [] }],
    });
    expect(normalizeRepoState({})).toEqual({ labels: [], issues: [], pullRequests: [] });
  });

  it('makes an absent label description and absent bodies ""', () => {
    const normalized = normalizeRepoState({
      labels: [{ name: "bug", color: "#d73a4a" }],
      issues: [{ number: 1, title: "t", state: "open", comments: [{ author: "a" }] }],
      pullRequests: [
        {
          number: 2,
          title: "p",
          state: "open",
          reviews: [{ author: "b", kind: "comment", comments: [{ author: "c" }] }],
        },
      ],
    });
    expect(normalized.labels[0]!.description).toBe("");
    expect(normalized.issues[0]!.body).toBe("");
    expect(normalized.issues[0]!.comments[0]!.body).toBe("");
    expect(normalized.pullRequests[0]!.body).toBe("");
    expect(normalized.pullRequests[0]!.reviews[0]!.body).toBe("");
    expect(normalized.pullRequests[0]!.reviews[0]!.comments[0]!.body).toBe("");
  });

  it("turns \\r\\n into \\n in every text field but leaves a lone \\r alone", () => {
    const crlf = "line one\r\nline two\r\n";
    const normalized = normalizeRepoState({
      labels: [{ name: "bug", color: "#d73a4a", description: crlf }],
      issues: [issue(1, { title: crlf, body: crlf, comments: [comment("a", crlf)] })],
      pullRequests: [
        pullRequest(2, {
          body: crlf,
          reviews: [review("b", "comment", crlf, [comment("c", crlf)])],
        }),
      ],
    });
    const lf = "line one\nline two\n";
    expect(normalized.labels[0]!.description).toBe(lf);
    expect(normalized.issues[0]).toMatchObject({ title: lf, body: lf, comments: [{ body: lf }] });
    expect(normalized.pullRequests[0]!.body).toBe(lf);
    expect(normalized.pullRequests[0]!.reviews[0]).toMatchObject({
      body: lf,
      comments: [{ body: lf }],
    });
    expect(normalizeRepoState({ issues: [issue(1, { body: "a\rb" })] }).issues[0]!.body).toBe(
      "a\rb",
    );
  });

  it("drops id, createdAt and updatedAt from every entity", () => {
    const volatile = { id: 7, createdAt: "2024-01-01T00:00:00Z", updatedAt: "2024-01-02" };
    const normalized = normalizeRepoState({
      labels: [{ ...label("bug"), ...volatile }],
      issues: [{ ...issue(1), ...volatile, comments: [{ ...comment("a", "x"), ...volatile }] }],
      pullRequests: [
        {
          ...pullRequest(2),
          ...volatile,
          reviews: [
            {
              ...review("b", "approved"),
              ...volatile,
              comments: [{ ...comment("c", "y"), id: "n" }],
            },
          ],
        },
      ],
    });
    const text = JSON.stringify(normalized);
    for (const key of ["id", "createdAt", "updatedAt"]) expect(text).not.toContain(`"${key}"`);
  });

  it("puts every collection in a canonical order and de-duplicates label names and assignees", () => {
    const normalized = normalizeRepoState({
      labels: [label("wontfix"), label("bug"), label("Bug")],
      issues: [
        issue(9),
        issue(2, {
          labels: ["z", "a", "z"],
          assignees: ["zoe", "al", "al"],
          comments: [comment("bob", "2"), comment("al", "9"), comment("bob", "1")],
        }),
      ],
      pullRequests: [
        pullRequest(5, {
          reviews: [
            review("bob", "comment", "x", [comment("y", "2"), comment("x", "1")]),
            review("al", "approved"),
            review("bob", "comment", "x", [comment("a", "0")]),
          ],
        }),
        pullRequest(3),
      ],
    });
    expect(normalized.labels.map((l) => l.name)).toEqual(["Bug", "bug", "wontfix"]);
    expect(normalized.issues.map((i) => i.number)).toEqual([2, 9]);
    expect(normalized.issues[0]).toMatchObject({
      labels: ["a", "z"],
      assignees: ["al", "zoe"],
      comments: [comment("al", "9"), comment("bob", "1"), comment("bob", "2")],
    });
    expect(normalized.pullRequests.map((p) => p.number)).toEqual([3, 5]);
    expect(normalized.pullRequests[1]!.reviews).toEqual([
      review("al", "approved"),
      review("bob", "comment", "x", [comment("a", "0")]),
      review("bob", "comment", "x", [comment("x", "1"), comment("y", "2")]),
    ]);
  });

  it("does not modify the state it is given", () => {
    const state = repo({
      labels: [label("b", "D73A4A"), label("a")],
      issues: [issue(2, { labels: ["y", "x"], body: "a\r\nb" }), issue(1)],
    });
    const before = clone(state);
    normalizeRepoState(state);
    expect(state).toEqual(before);
  });

  it("refuses a label defined twice and a number used by an issue and a pull request", () => {
    expect(() => normalizeRepoState({ labels: [label("bug"), label("bug", "#000000")] })).toThrow(
      /label "bug" is defined twice/,
    );
    expect(() =>
      normalizeRepoState({ issues: [issue(4)], pullRequests: [pullRequest(4)] }),
    ).toThrow(/number 4 is used twice/);
    expect(() => normalizeRepoState({ issues: [issue(4), issue(4)] })).toThrow(/number 4/);
  });
});

describe("checkMutation applies the normalization", () => {
  const expected = repo({
    labels: [label("bug", "#d73a4a", "")],
    issues: [issue(1, { body: "a\nb", labels: ["bug"], comments: [comment("al", "x\ny")] })],
    pullRequests: [
      pullRequest(2, { reviews: [review("bo", "approved", "", [comment("c", "z")])] }),
    ],
  });

  it("accepts a colour written in upper case without #", () => {
    const actual = clone(expected);
    actual.labels![0]!.color = "D73A4A";
    expect(checkMutation(expected, actual)).toEqual({ pass: true });
  });

  it("accepts CRLF line endings where the expected state has LF", () => {
    const actual = clone(expected);
    actual.issues![0]!.body = "a\r\nb";
    actual.issues![0]!.comments![0]!.body = "x\r\ny";
    expect(checkMutation(expected, actual)).toEqual({ pass: true });
  });

  it("accepts absent arrays, descriptions and bodies where the expected state has empty ones", () => {
    const actual: typeof expected = {
      labels: [{ name: "bug", color: "#d73a4a" }],
      issues: [
        {
          number: 1,
          title: "Issue 1",
          body: "a\nb",
          state: "open",
          labels: ["bug"],
          comments: [comment("al", "x\ny")],
        },
      ],
      pullRequests: [
        {
          number: 2,
          title: "Pull request 2",
          state: "open",
          reviews: [{ author: "bo", kind: "approved", comments: [{ author: "c", body: "z" }] }],
        },
      ],
    };
    expect(checkMutation(expected, actual)).toEqual({ pass: true });
    expect(checkMutation(actual, expected)).toEqual({ pass: true });
  });

  it("ignores ids and timestamps even when they differ", () => {
    const a = clone(expected);
    const b = clone(expected);
    Object.assign(a.issues![0]!, { id: 1, createdAt: "2024-01-01", updatedAt: "2024-01-02" });
    Object.assign(b.issues![0]!, { id: 99, createdAt: "2025-06-01", updatedAt: "2025-06-02" });
    Object.assign(b.pullRequests![0]!.reviews![0]!, { id: "r-1", createdAt: "x" });
    expect(checkMutation(a, b)).toEqual({ pass: true });
  });
});

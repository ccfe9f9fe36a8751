import { describe, expect, it } from "vitest";
import {
  validateRepoState,
  validateScoringSpec,
  validateSubmission,
} from "../../src/scoring/index.js";
import type { InputProblem } from "../../src/shared/index.js";
import { issue, label, pullRequest } from "./builders.js";

function problems(result: { ok: true } | { ok: false; problems: InputProblem[] }): string[] {
  expect(result.ok).toBe(false);
  return result.ok ? [] : result.problems.map((p) => `${p.path}: ${p.message}`);
}

describe("validateRepoState", () => {
  it("accepts a minimal state and a full one with volatile fields", () => {
    expect(validateRepoState({}).ok).toBe(true);
    const full = {
      labels: [{ id: 1, name: "bug", color: "D73A4A", createdAt: "2024-01-01" }],
      issues: [{ ...issue(1), id: "I_1", createdAt: "x", updatedAt: "y" }],
      pullRequests: [
        pullRequest(2, {
          reviews: [{ author: "a", kind: "approved", comments: [{ author: "a", id: 3 }] }],
        }),
      ],
    };
    expect(validateRepoState(full)).toEqual({ ok: true, value: full });
  });

  it("names the JSON path of a wrong type: issues[3].labels[1]: expected string", () => {
    const state = {
      issues: [issue(1), issue(2), issue(3), issue(4, { labels: ["bug", 7 as unknown as string] })],
    };
    expect(problems(validateRepoState(state))).toEqual(["issues[3].labels[1]: expected string"]);
  });

  it("names missing fields, unknown fields, bad enums and bad numbers", () => {
    const state = {
      issues: [
        { number: 1, state: "open" },
        { number: 2, title: "t", state: "reopened" },
        { number: 2.5, title: "t", state: "open" },
        { number: 0, title: "t", state: "open", lables: ["bug"] },
      ],
      pullRequests: [{ ...pullRequest(9), reviews: [{ author: "a", kind: "lgtm" }] }],
    };
    const found = problems(validateRepoState(state));
    // "(missing)" is appended by the shared validation where zod reports the input.
    expect(found[0]).toMatch(/^issues\[0\]\.title: expected string( \(missing\))?$/);
    expect(found.slice(1)).toEqual([
      'issues[1].state: expected one of "open", "closed"',
      "issues[2].number: expected int",
      "issues[3].number: expected a positive whole number",
      "issues[3].lables: unknown field (not allowed here)",
      'pullRequests[0].reviews[0].kind: expected one of "comment", "approved", "request-changes"',
    ]);
  });

  it("accepts a pull request state of merged but not an issue state of merged", () => {
    expect(validateRepoState({ pullRequests: [pullRequest(1, { state: "merged" })] }).ok).toBe(
      true,
    );
    expect(problems(validateRepoState({ issues: [{ ...issue(1), state: "merged" }] }))).toEqual([
      'issues[0].state: expected one of "open", "closed"',
    ]);
  });

  it("explains what a colour must look like", () => {
    expect(problems(validateRepoState({ labels: [label("bug", "red")] }))).toEqual([
      "labels[0].color: expected a 6-digit hex colour such as #d73a4a or D73A4A (case and leading # are normalized)",
    ]);
  });

  it("rejects empty label names, authors and assignees", () => {
    const state = {
      labels: [label("")],
      issues: [issue(1, { labels: [""], assignees: [""], comments: [{ author: "", body: "x" }] })],
    };
    expect(problems(validateRepoState(state))).toEqual([
      "labels[0].name: a label name must not be empty",
      "issues[0].labels[0]: a label name must not be empty",
      "issues[0].assignees[0]: an assignee must not be empty",
      "issues[0].comments[0].author: an author must not be empty",
    ]);
  });

  it("rejects a label defined twice and a number used twice across issues and pull requests", () => {
    const state = {
      labels: [label("bug"), label("docs"), label("bug", "#000000")],
      issues: [issue(1), issue(2), issue(1)],
      pullRequests: [pullRequest(2)],
    };
    expect(problems(validateRepoState(state))).toEqual([
      'labels[2].name: label "bug" is defined twice (first at labels[0])',
      "issues[2].number: number 1 is already used by issues[0] (issues and pull requests share one number space)",
      "pullRequests[0].number: number 2 is already used by issues[1] (issues and pull requests share one number space)",
    ]);
  });

  it("rejects a document that is not an object", () => {
    expect(problems(validateRepoState([]))).toEqual(["(root): expected object"]);
  });
});

describe("validateScoringSpec", () => {
  it("accepts a mutation spec and a read spec", () => {
    expect(validateScoringSpec({ kind: "mutation", expected: {} }).ok).toBe(true);
    expect(
      validateScoringSpec({ kind: "read", facts: [{ description: "d", anyOf: ["x"] }] }).ok,
    ).toBe(true);
  });

  it("names an unknown kind", () => {
    expect(problems(validateScoringSpec({ kind: "diff" }))).toEqual([
      'kind: expected one of "mutation", "read"',
    ]);
  });

  it("prefixes problems of the expected state with expected.", () => {
    const spec = {
      kind: "mutation",
      expected: { issues: [issue(1), { ...issue(2), labels: [3] }, issue(1)] },
    };
    expect(problems(validateScoringSpec(spec))).toEqual([
      "expected.issues[1].labels[0]: expected string",
    ]);
    const duplicate = { kind: "mutation", expected: { issues: [issue(1), issue(1)] } };
    expect(problems(validateScoringSpec(duplicate))).toEqual([
      "expected.issues[1].number: number 1 is already used by expected.issues[0] (issues and pull requests share one number space)",
    ]);
  });

  it("reports an invalid pattern when the spec loads, naming facts[2].pattern", () => {
    const spec = {
      kind: "read",
      facts: [
        { description: "a", anyOf: ["x"] },
        { description: "b", anyOf: ["y"], pattern: "ok\\d+" },
        { description: "c", anyOf: [], pattern: "(unclosed" },
      ],
    };
    const [problem] = problems(validateScoringSpec(spec));
    expect(problem).toMatch(
      /^facts\[2\]\.pattern: not a valid regular expression \(JavaScript, Unicode mode\): .*unclosed|^facts\[2\]\.pattern: not a valid regular expression \(JavaScript, Unicode mode\): .+/,
    );
  });

  it("rejects an escape that only non-Unicode regular expressions allow", () => {
    const spec = { kind: "read", facts: [{ description: "a", anyOf: [], pattern: "\\#42" }] };
    expect(problems(validateScoringSpec(spec))[0]).toMatch(
      /^facts\[0\]\.pattern: not a valid regular expression/,
    );
  });

  it("rejects a pattern that matches an empty report", () => {
    const spec = {
      kind: "read",
      facts: [{ description: "a", anyOf: ["x"], pattern: "(answer)?" }],
    };
    expect(problems(validateScoringSpec(spec))).toEqual([
      "facts[0].pattern: the pattern matches an empty report, so this fact could never be missing",
    ]);
  });

  it("rejects a fact that can never be present and renderings that are empty once normalized", () => {
    const spec = {
      kind: "read",
      facts: [
        { description: "a", anyOf: [] },
        { description: "b", anyOf: ["ok", "  ", "**"] },
        { description: "", anyOf: ["x"] },
      ],
    };
    expect(problems(validateScoringSpec(spec))).toEqual([
      "facts[2].description: a description must not be empty",
    ]);
    spec.facts[2]!.description = "c";
    expect(problems(validateScoringSpec(spec))).toEqual([
      "facts[0].anyOf: give at least one rendering, or a pattern",
      "facts[1].anyOf[1]: a rendering must contain text (it is empty once case, whitespace, quotes and Markdown markers are normalized)",
      "facts[1].anyOf[2]: a rendering must contain text (it is empty once case, whitespace, quotes and Markdown markers are normalized)",
    ]);
  });

  it("rejects a read spec without facts and unknown fields in a fact", () => {
    expect(problems(validateScoringSpec({ kind: "read", facts: [] }))).toEqual([
      "facts: a read spec needs at least one fact",
    ]);
    expect(
      problems(
        validateScoringSpec({
          kind: "read",
          facts: [{ description: "a", anyOf: ["x"], regex: "y" }],
        }),
      ),
    ).toEqual(["facts[0].regex: unknown field (not allowed here)"]);
  });
});

describe("validateSubmission", () => {
  it("accepts both kinds and prefixes state problems with state.", () => {
    expect(validateSubmission({ kind: "read", report: "" }).ok).toBe(true);
    expect(validateSubmission({ kind: "mutation", state: {} }).ok).toBe(true);
    expect(
      problems(
        validateSubmission({ kind: "mutation", state: { labels: [label("a"), label("a")] } }),
      ),
    ).toEqual(['state.labels[1].name: label "a" is defined twice (first at state.labels[0])']);
    expect(problems(validateSubmission({ kind: "read" }))[0]).toMatch(/^report: expected string/);
  });
});

import { describe, expect, it } from "vitest";
import {
  checkReadAnswer,
  findWholePhrase,
  normalizeForMatching,
  type RequiredFact,
  scoringResultSchema,
} from "../../src/scoring/index.js";

function fact(anyOf: string[], pattern?: string, description = "the fact"): RequiredFact {
  return pattern === undefined ? { description, anyOf } : { description, anyOf, pattern };
}

function present(anyOf: string[], report: string, pattern?: string): boolean {
  return checkReadAnswer([fact(anyOf, pattern)], report).pass;
}

describe("normalizeForMatching", () => {
  it("lower-cases and collapses every run of whitespace to one space", () => {
    expect(normalizeForMatching("  Five\tOPEN\n\n  Issues \r\n")).toBe("five open issues");
  });

  it("applies Unicode compatibility composition (NFKC)", () => {
    expect(normalizeForMatching("Ｉｓｓｕｅ ＃４２")).toBe("issue #42");
    expect(normalizeForMatching("ﬁle")).toBe("file");
    expect(normalizeForMatching("5\u00a0open")).toBe("5 open");
    expect(normalizeForMatching("e\u0301")).toBe("\u00e9");
  });

  it("straightens curly quotes", () => {
    expect(normalizeForMatching("\u201cStream parser\u201d isn\u2019t \u2018done\u2019")).toBe(
      "\"stream parser\" isn't 'done'",
    );
  });

  it("removes invisible format characters and Markdown emphasis and code markers", () => {
    expect(normalizeForMatching("5\u200b open \u00adissues")).toBe("5 open issues");
    expect(normalizeForMatching("**5** open `#42`")).toBe("5 open #42");
  });
});

describe("findWholePhrase", () => {
  it.each([
    // [phrase, text, found]
    ["#42", "see #42.", true],
    ["#42", "see #420", false],
    ["#42", "#42", true],
    ["#42", "(#42)", true],
    ["#42", "pr#42 fixed it", true],
    ["#42", "#4", false],
    ["#4", "#42 and #43", false],
    ["5 open", "15 open", false],
    ["5 open", "5 opened", false],
    ["5 open", "there are 5 open issues", true],
    ["5 open", "1.5 open", false],
    ["5 open", "-5 open", true],
    ["5", "5,000 stars", false],
    ["5", "5.5 stars", false],
    ["5", "1,5", false],
    ["5", "there are 5.", true],
    ["5", "there are 5, not 6", true],
    ["5", "5th place", false],
    ["5", "x5", false],
    ["42", "issue_42", false],
    ["2.3.1", "2.3.10", false],
    ["2.3.1", "12.3.1", false],
    ["2.3.1", "v2.3.1.", false],
    ["v2.3.1", "v2.3.1.", true],
    ["2.3.1", "(2.3.1)", true],
    ["2.3.1", "2.3.1.4", false],
    ["bug", "debug", false],
    ["bug", "bugs", false],
    ["bug", "bug-fix", true],
    ["bug", "the bug's cause", true],
    ["alice", "@alice", true],
    ["alice", "alice_b", false],
    ["issue 7", "issue 7", true],
    ["issue 7", "tissue 7", false],
    ["42", "第42个", true],
    ["问题", "这个问题很严重", true],
    ["café", "cafés", false],
    ["café", "café!", true],
    ["v1", "v1.2", false],
    ["v1", "v1 and v2", true],
    ["", "anything", false],
  ])("%j in %j → %s", (phrase, text, found) => {
    expect(findWholePhrase(text, phrase) !== -1).toBe(found);
  });

  it("finds a later whole occurrence after a glued one", () => {
    expect(findWholePhrase("#420 and #42", "#42")).toBe(9);
  });

  it("handles letters outside the Basic Multilingual Plane as word characters", () => {
    expect(findWholePhrase("𐐨ab", "ab")).toBe(-1);
    expect(findWholePhrase("ab𐐨", "ab")).toBe(-1);
    expect(findWholePhrase("😀ab😀", "ab")).toBe(2);
  });
});

describe("checkReadAnswer", () => {
  it("finds a rendering regardless of case, spacing, width and quote style", () => {
    expect(present(["5 open issues"], "There are FIVE… no, 5  OPEN\nissues.")).toBe(true);
    expect(present(["“Stream parser”"], 'PR "Stream Parser" is blocked')).toBe(true);
    expect(present(['"stream parser"'], "PR “Stream Parser” is blocked")).toBe(true);
    expect(present(["#42"], "See ＃４２.")).toBe(true);
    expect(present(["5 open issues"], "There are **5 open** issues")).toBe(true);
  });

  it("matches only whole phrases: #42 is not in #420, 5 open is not in 15 open", () => {
    expect(present(["#42"], "Fixed in #420.")).toBe(false);
    expect(present(["5 open"], "We have 15 open bugs")).toBe(false);
    expect(present(["5 open"], "We have 5 open bugs")).toBe(true);
  });

  it("accepts any one of the renderings", () => {
    expect(present(["five", "5"], "Five of them.")).toBe(true);
    expect(present(["five", "5"], "There are 5.")).toBe(true);
    expect(present(["five", "5"], "There are 55.")).toBe(false);
  });

  it("accepts a pattern match when no rendering occurs", () => {
    const pattern = "\\bv?2\\.3\\.1(?!\\.?\\d)";
    expect(present([], "Confirmed on V2.3.1.", pattern)).toBe(true);
    expect(present([], "Confirmed on 2.3.10", pattern)).toBe(false);
    expect(present(["never"], "confirmed on 2.3.1", pattern)).toBe(true);
  });

  it("tests the pattern against the normalized report, case-insensitively", () => {
    expect(present([], "The ANSWER  is\n42", "answer is 42")).toBe(true);
    expect(present([], "It’s 42", "it's \\d+")).toBe(true);
    expect(present([], "it's 42", "it’s \\d+")).toBe(true);
  });

  it("requires every fact and names each missing one with its description", () => {
    const facts = [
      fact(["#7"], undefined, "the pull request"),
      fact(["kenji"], undefined, "the reviewer"),
      fact(["4 open bugs"], "^never$", "the count"),
    ];
    const report = "PR #7 is blocked; there are 14 open bugs.";
    const result = checkReadAnswer(facts, report);
    expect(result).toEqual({
      pass: false,
      report,
      facts: [
        {
          description: "the pull request",
          present: true,
          match: { kind: "anyOf", rendering: "#7" },
        },
        { description: "the reviewer", present: false },
        { description: "the count", present: false },
      ],
      missing: [
        {
          index: 1,
          description: "the reviewer",
          message: 'facts[1] missing: "the reviewer" (none of "kenji" occurs as a whole phrase)',
        },
        {
          index: 2,
          description: "the count",
          message:
            'facts[2] missing: "the count" (none of "4 open bugs" occurs as a whole phrase; pattern /^never$/ does not match)',
        },
      ],
    });
    expect(scoringResultSchema.safeParse({ kind: "read", ...result }).success).toBe(true);
  });

  it("keeps the report exactly as it was given and records what matched", () => {
    const report = "  **Answer**: it’s v2.3.1\r\n";
    const result = checkReadAnswer([fact([], "v\\d+\\.\\d+\\.\\d+")], report);
    expect(result).toEqual({
      pass: true,
      report,
      facts: [
        { description: "the fact", present: true, match: { kind: "pattern", text: "v2.3.1" } },
      ],
    });
    expect(scoringResultSchema.safeParse({ kind: "read", ...result }).success).toBe(true);
  });

  it("fails an empty report", () => {
    expect(present(["anything"], "")).toBe(false);
  });

  it("throws when a pattern is not a valid regular expression (specs are validated when loaded)", () => {
    expect(() => checkReadAnswer([fact([], "(unclosed")], "text")).toThrow(
      /facts\[0\]\.pattern is not a valid regular expression/,
    );
  });
});

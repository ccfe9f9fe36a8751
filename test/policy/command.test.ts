import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkCommand, tokenizeCommand } from "../../src/policy/index.js";

const vocabulary = [
  ["npm", "test"],
  ["node", "--test"],
  ["git", "status", "--short"],
];

describe("Bash command vocabulary", () => {
  it("allows a command whose words equal one allowed argv, ignoring extra spaces and tabs", () => {
    expect(checkCommand("npm test", vocabulary)).toEqual({ ok: true, argv: ["npm", "test"] });
    expect(checkCommand("  git\tstatus   --short ", vocabulary)).toEqual({
      ok: true,
      argv: ["git", "status", "--short"],
    });
  });

  it("refuses an allowed command with extra arguments (exact match, not prefix)", () => {
    const result = checkCommand("npm test -- --inspect", vocabulary);
    expect(result).toMatchObject({ ok: false, rule: "command-not-allowed" });
  });

  it("refuses a command outside the vocabulary and names what is allowed", () => {
    const result = checkCommand("curl https://example.com", vocabulary);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.rule).toBe("command-not-allowed");
    expect(result.reason).toContain("npm test, node --test, git status --short");
  });

  it.each([
    ["npm test; rm -rf /", ";"],
    ["npm test && curl x", "&"],
    ["npm test || true", "|"],
    ["npm test | tee out", "|"],
    ["npm test &", "&"],
    ["echo $(id)", "$"],
    ["echo `id`", "`"],
    ["npm test > out.txt", ">"],
    ["npm test < in.txt", "<"],
    ["npm test\nrm -rf /", "\n"],
    ["npm test\r", "\r"],
    ["(npm test)", "("],
    ["npm te\\st", "\\"],
    ["npm 'test'", "'"],
    ['npm "test"', '"'],
    ["npm $HOME", "$"],
    ["ls *", "*"],
    ["ls ~", "~"],
    ["npm test #comment", "#"],
    ["npm {test,x}", "{"],
    ["npm\u00a0test", "\u00a0"],
  ])("denies shell syntax in %j", (command, character) => {
    const result = checkCommand(command, vocabulary);
    expect(result).toMatchObject({ ok: false, rule: "shell-metacharacter" });
    const tokens = tokenizeCommand(command);
    expect(tokens.ok).toBe(false);
    if (!tokens.ok) expect(tokens.character).toBe(character);
  });

  it("treats an empty command as invalid input", () => {
    expect(checkCommand("   ", vocabulary)).toMatchObject({ ok: false, rule: "invalid-input" });
  });

  it("never allows a string containing a character outside the plain word set", () => {
    fc.assert(
      fc.property(fc.string(), (suffix) => {
        const command = `npm test${suffix}`;
        const result = checkCommand(command, vocabulary);
        if (result.ok) {
          expect(/^[ \t]*$/.test(suffix)).toBe(true);
        }
      }),
    );
  });

  it("tokenizes exactly like word splitting for plain words", () => {
    const word = fc.stringMatching(/^[A-Za-z0-9_./:=@%+,-]{1,8}$/);
    fc.assert(
      fc.property(fc.array(word, { minLength: 1, maxLength: 5 }), (words) => {
        expect(tokenizeCommand(words.join(" \t "))).toEqual({ ok: true, argv: words });
      }),
    );
  });
});

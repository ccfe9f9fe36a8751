import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkCommand, tokenizeCommand, tokenizeQuotedCommand } from "../../src/policy/index.js";

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

describe("named programs (a forge task's CLI tools)", () => {
  const programs = ["curl"];

  it("allows any arguments, quoted or plain, and splits them as a shell would", () => {
    expect(
      checkCommand(
        `curl -X POST -H 'Content-Type: application/json' -d '{"body":"Dup of #4; see x"}' http://127.0.0.1:40118/api/v1/repos/a/b/issues/3/comments`,
        [],
        programs,
      ),
    ).toEqual({
      ok: true,
      argv: [
        "curl",
        "-X",
        "POST",
        "-H",
        "Content-Type: application/json",
        "-d",
        '{"body":"Dup of #4; see x"}',
        "http://127.0.0.1:40118/api/v1/repos/a/b/issues/3/comments",
      ],
    });
    expect(tokenizeQuotedCommand(`curl -d"a b"'c' ''`)).toEqual({
      ok: true,
      argv: ["curl", "-da bc", ""],
    });
  });

  it.each([
    ["curl x; rm -rf /", ";"],
    ["curl x | sh", "|"],
    ["curl $(id)", "$"],
    ['curl "$HOME"', "$"],
    ['curl "`id`"', "`"],
    ['curl "a\\"b"', "\\"],
    ['curl "hi!"', "!"],
    ["curl x > /tmp/out", ">"],
    ["curl 'a\nb'", "\n"],
    ["curl 'open", "'"],
    ["curl x &", "&"],
  ])("still denies shell syntax outside what quotes make literal: %j", (command, character) => {
    const result = checkCommand(command, [], programs);
    expect(result).toMatchObject({ ok: false, rule: "shell-metacharacter" });
    const tokens = tokenizeQuotedCommand(command);
    expect(tokens.ok).toBe(false);
    if (!tokens.ok) expect(tokens.character).toBe(character);
  });

  it("applies to the program named, not to another one or a path to it", () => {
    expect(checkCommand("wget 'x'", [], programs)).toMatchObject({ rule: "shell-metacharacter" });
    expect(checkCommand("wget x", [], programs)).toMatchObject({ rule: "command-not-allowed" });
    expect(checkCommand("/usr/bin/curl x", [], programs)).toMatchObject({
      rule: "command-not-allowed",
    });
    expect(checkCommand("FOO=1 curl x", [], programs)).toMatchObject({
      rule: "command-not-allowed",
    });
  });

  it("agrees with a real shell on every command it accepts", () => {
    const shells = ["/bin/sh", "/bin/bash"].filter((shell) => existsSync(shell));
    const piece = fc.oneof(
      fc.stringMatching(/^[A-Za-z0-9_./:=@%+,-]{1,6}$/),
      fc.string({ maxLength: 8 }).map((s) => `'${s.replace(/'/g, "")}'`),
      fc.string({ maxLength: 8 }).map((s) => `"${s}"`),
      fc.constantFrom(" ", "\t", "{", "}", "*", "#", "~", "é", "[a]"),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 6 }), (pieces) => {
        const command = `curl ${pieces.join("")}`;
        const tokens = tokenizeQuotedCommand(command);
        if (!tokens.ok) return;
        for (const shell of shells) {
          const printed = execFileSync(
            shell,
            ["-c", `curl() { [ $# -eq 0 ] || printf '%s\\0' "$@"; }; ${command}`],
            { encoding: "utf8", env: { PATH: "/usr/bin:/bin", LC_ALL: "C.UTF-8" } },
          );
          const words = printed === "" ? [] : printed.slice(0, -1).split("\0");
          expect([shell, ...words]).toEqual([shell, ...tokens.argv.slice(1)]);
        }
      }),
      { numRuns: 150 },
    );
  });
});

// Focused invalid fixtures (examples/invalid/): each diagnostic is asserted with its code, line,
// column and message, so a change in wording or position is a visible, reviewed change.
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  compileHarness,
  DIAGNOSTIC_CODES,
  type Diagnostic,
  formatDiagnostic,
} from "../../src/language/index.js";
import { readHarnessSource } from "../../src/shared/index.js";
import { located, readExample, withComposition } from "./support.js";

const REPO = fileURLToPath(new URL("../..", import.meta.url));

type Expected = Pick<Diagnostic, "code" | "line" | "column" | "message"> & {
  severity?: Diagnostic["severity"];
};

function compileFixtures(...files: string[]) {
  return compileHarness(
    files.map((file) => ({
      uri: `examples/invalid/${file}`,
      text: readExample(`invalid/${file}`),
    })),
    { readSource: (uri, path) => readHarnessSource(join(REPO, uri), path) },
  );
}

function expectDiagnostics(diagnostics: readonly Diagnostic[], expected: readonly Expected[]) {
  expect(
    diagnostics.map(({ code, line, column, message, severity }) => ({
      code,
      line,
      column,
      message,
      severity,
    })),
  ).toEqual(expected.map((e) => ({ severity: "error", ...e })));
}

describe("focused invalid fixtures", () => {
  it("v02-clauses.harness: every misuse of source, mcp, cli, hook and tools, at its place", () => {
    const { bundle, diagnostics } = compileFixtures("v02-clauses.harness");
    expect(bundle).toBeUndefined();
    expect(diagnostics.map((d) => `${d.line}:${d.column} ${d.code} ${d.message}`)).toEqual([
      '2:37 HL2021 "mcp" belongs on a component of kind tool; "misplaced" is of kind workflow',
      '3:34 HL2022 the mcp block of "no-command" has no command: add command "<program>" (the stdio MCP server to start)',
      '4:65 HL2023 variable "MODE" is already set at 4:56 in the env of "twice"',
      '5:39 HL2024 source "../outside" leaves the folder of its .harness file (..); give a path inside the folder of examples/invalid/v02-clauses.harness',
      expect.stringMatching(
        /^6:39 HL2025 source "v02\/no-such-folder" cannot be read: no such file or folder \(looked for .*examples\/invalid\/v02\/no-such-folder\)$/,
      ),
      '7:43 HL2026 source "v02/not-a-skill" of "not-a-skill": the folder has no SKILL.md',
      '8:41 HL2026 source "v02/bad-front-matter" of "bad-front": SKILL.md\'s front matter needs a name: lower-case letters, digits and hyphens, at most 64 characters',
      '9:49 HL2026 source "v02/rules.txt" of "text-rules": the source of instructions is one Markdown file (.md)',
      '10:11 HL2022 subagent "no-prompt" has no source: add source "<prompt.md>", the Markdown file with its instructions',
      '11:33 HL2022 the hook block of "bad-event" needs an event and a command: hook { event Stop command ["node", "hooks/stop.mjs"] }',
      '11:46 HL1006 expected one of "PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SubagentStop", "SessionStart", "SessionEnd", "Notification" or "PreCompact" after "event", found "Finish"',
      "12:66 HL2027 \"${HOME}\" is not a placeholder harnesslab fills here; the placeholders are ${source} (the folder or file of the component's source) and ${forge.url}, ${forge.api_url}, ${forge.token}, ${forge.owner}, ${forge.repo}, ${forge.user} (a forge task's repository)",
      '13:68 HL2027 ${source} names the component\'s source, and "no-source" has none: add source "<file or folder>"',
      '14:41 HL2021 "cli" belongs on a component of kind tool; "cli-misplaced" is of kind workflow',
      '15:56 HL2021 "both" is already an MCP server (mcp); a tool is an MCP server or a command-line program (cli), not both: declare two components',
      '16:38 HL2022 the cli block of "cli-no-command" has no command: add command "<program>" (the program the agent runs by the component\'s name)',
      "17:72 HL2027 \"${forge.url}\" is not a placeholder harnesslab fills here; a hook's one placeholder is ${source} (the folder or file of the component's source)",
      "18:59 HL2027 \"${forge.password}\" is not a placeholder harnesslab fills here; the placeholders are ${source} (the folder or file of the component's source) and ${forge.url}, ${forge.api_url}, ${forge.token}, ${forge.owner}, ${forge.repo}, ${forge.user} (a forge task's repository)",
    ]);
  });

  it("syntax-errors.harness: reports every syntax error of the file, recovering after each", () => {
    const { bundle, diagnostics } = compileFixtures("syntax-errors.harness");
    expect(bundle).toBeUndefined();
    expectDiagnostics(diagnostics, [
      {
        code: "HL1006",
        line: 3,
        column: 8,
        message:
          'expected one of "skill", "tool", "program", "workflow", "hook", "policy", "observer", "ui", "instructions" or "subagent" after "kind", found "skil"',
      },
      {
        code: "HL1007",
        line: 5,
        column: 3,
        message:
          'expected one of "kind", "description", "input", "output", "permissions", "source", "mcp", "cli", "hook", "tools" or "}" in the component block, found "colour"',
      },
      {
        code: "HL1005",
        line: 8,
        column: 16,
        message: 'expected "for" after "binding reader", found "qoder"',
      },
      {
        code: "HL1006",
        line: 8,
        column: 59,
        message:
          'expected one of "unsupported", "advisory", "wired" or "enforced" after "strength", found "strong"',
      },
      {
        code: "HL1005",
        line: 12,
        column: 31,
        message: 'expected "," or "]" after a component in the provides list, found "component"',
      },
      {
        code: "HL1005",
        line: 19,
        column: 26,
        message:
          'expected a version range such as "@1", "@^1.2" or "@~1.2.3" after "plugin.tools", found "]"',
      },
      {
        code: "HL1006",
        line: 20,
        column: 48,
        message: 'expected one of "fail" or "report" after "on-degrade", found "ignore"',
      },
      {
        code: "HL1004",
        line: 21,
        column: 52,
        message:
          'malformed number or duration "5min": a duration is digits followed by ms, s, m or h (e.g. 1500ms, 90s, 10m, 24h)',
      },
    ]);
  });

  it("lexical-errors.harness: reports stray characters, decimals, unterminated strings and comments", () => {
    const { diagnostics } = compileFixtures("lexical-errors.harness");
    expectDiagnostics(diagnostics, [
      {
        code: "HL1001",
        line: 3,
        column: 13,
        message: 'unexpected character ";": not part of the .harness syntax',
      },
      {
        code: "HL1002",
        line: 4,
        column: 15,
        message:
          'unterminated string: add the closing " before the end of the line (strings cannot span lines; write \\n for a line break)',
      },
      {
        code: "HL1004",
        line: 9,
        column: 37,
        message:
          'malformed number "0.5": only whole numbers are allowed (e.g. 24, or a duration such as 1500ms)',
      },
      {
        code: "HL1003",
        line: 11,
        column: 1,
        message: 'unterminated block comment: "/*" is never closed by "*/"',
      },
    ]);
  });

  it("unclosed-block.harness: reports the unclosed block once and still parses the next declaration", () => {
    const { diagnostics } = compileFixtures("unclosed-block.harness");
    // No "unknown component writer" follows: the declaration after the unclosed block was parsed.
    expectDiagnostics(diagnostics, [
      {
        code: "HL1010",
        line: 6,
        column: 1,
        message: 'expected "}" to close the input list opened at 4:9, found "component"',
      },
    ]);
  });

  it("structure-errors.harness: repeated clauses, missing required clauses, numbers too large", () => {
    const { diagnostics } = compileFixtures("structure-errors.harness");
    expectDiagnostics(diagnostics, [
      {
        code: "HL1008",
        line: 4,
        column: 3,
        message: '"kind" is already given at 3:3 in this component; each clause may appear once',
      },
      {
        code: "HL1009",
        line: 7,
        column: 11,
        message:
          'component "writer" has no "kind": add "kind <k>" with k one of "skill", "tool", "program", "workflow", "hook", "policy", "observer", "ui", "instructions" or "subagent"',
      },
      {
        code: "HL1009",
        line: 11,
        column: 8,
        message: 'plugin "tools" has no "version": add version "<semver>", e.g. version "1.0.0"',
      },
      {
        code: "HL1008",
        line: 17,
        column: 3,
        message:
          '"target" is already given at 16:3 in this composition; each clause may appear once',
      },
      {
        code: "HL1011",
        line: 19,
        column: 21,
        message:
          "integer 99999999999999999999 is too large (the largest allowed is 9007199254740991)",
      },
      {
        code: "HL1011",
        line: 20,
        column: 23,
        message: "duration 9999999999999h is too large (at most 9007199254740991 ms)",
      },
    ]);
  });

  it("inheritance-errors.harness: unknown parents, cycles, re-declared members, missing target", () => {
    const { diagnostics } = compileFixtures("inheritance-errors.harness");
    const uri = "examples/invalid/inheritance-errors.harness";
    const onlyAdd = "a child composition may only override the target and add new members";
    expectDiagnostics(diagnostics, [
      {
        code: "HL2018",
        line: 13,
        column: 20,
        message: `composition "child" includes plugin "gates", which it already inherits from "base" (${uri}:7:20); ${onlyAdd}`,
      },
      {
        code: "HL2018",
        line: 14,
        column: 11,
        message: `composition "child" requires "gate", which it already inherits from "base" (${uri}:8:11); ${onlyAdd}`,
      },
      {
        code: "HL2018",
        line: 15,
        column: 15,
        message: `composition "child" sets "runtime.turns", which it already inherits from "base" (${uri}:9:15); ${onlyAdd}`,
      },
      {
        code: "HL2016",
        line: 18,
        column: 28,
        message:
          'composition "orphan" extends "basis", which is not declared (did you mean "base"?)',
      },
      {
        code: "HL2017",
        line: 22,
        column: 28,
        message:
          'composition "loop-a" extends itself through loop-a → loop-b → loop-a; remove one "extends" from the cycle',
      },
      {
        code: "HL2017",
        line: 23,
        column: 28,
        message:
          'composition "loop-b" extends itself through loop-b → loop-a → loop-b; remove one "extends" from the cycle',
      },
      {
        code: "HL2019",
        line: 25,
        column: 13,
        message:
          'composition "nowhere" has no target: add "target <host>" with one of qoder, pi, claude-code, codex, scripted',
      },
    ]);
  });

  it("duplicates.harness: repeated outputs and hosts are errors, a repeated permission a warning", () => {
    const { diagnostics } = compileFixtures("duplicates.harness");
    expectDiagnostics(diagnostics, [
      {
        code: "HL2008",
        line: 4,
        column: 26,
        message: 'duplicate output "summary" in component "reader": already listed at 4:12',
      },
      {
        code: "HL3002",
        line: 5,
        column: 32,
        severity: "warning",
        message: 'permission "workspace read" is already listed at 5:17 in component "reader"',
      },
      {
        code: "HL2003",
        line: 8,
        column: 32,
        message:
          'duplicate binding for component "reader" on host "qoder": first declared at examples/invalid/duplicates.harness:8:21; a component has one binding per host',
      },
    ]);
  });

  it("warnings.harness: warnings name unknown hosts once and still produce a bundle", () => {
    const { bundle, diagnostics } = compileFixtures("warnings.harness");
    expect(bundle?.compositions.map((c) => c.target)).toEqual(["qoder-cli"]);
    expectDiagnostics(diagnostics, [
      {
        code: "HL3002",
        line: 4,
        column: 45,
        severity: "warning",
        message: 'permission "workspace read" is already listed at 4:17 in component "reader"',
      },
      {
        code: "HL3001",
        line: 7,
        column: 20,
        severity: "warning",
        message:
          'host "qoder-cli" is not one harnesslab knows (qoder, pi, claude-code, codex, scripted); it resolves as advisory prompt guidance only',
      },
      {
        code: "HL3001",
        line: 8,
        column: 20,
        severity: "warning",
        message:
          'host "claude_code" is not one harnesslab knows (qoder, pi, claude-code, codex, scripted) (did you mean "claude-code"?); it resolves as advisory prompt guidance only',
      },
    ]);
  });

  it("cross-file-a/b.harness: finds duplicates and references across files", () => {
    const { diagnostics } = compileFixtures("cross-file-a.harness", "cross-file-b.harness");
    const a = "examples/invalid/cross-file-a.harness";
    expect(diagnostics.every((d) => d.uri === "examples/invalid/cross-file-b.harness")).toBe(true);
    expectDiagnostics(diagnostics, [
      {
        code: "HL2001",
        line: 2,
        column: 11,
        message: `duplicate component "gate": first declared at ${a}:2:11`,
      },
      {
        code: "HL2003",
        line: 3,
        column: 18,
        message: `duplicate binding for component "gate" on host "pi": first declared at ${a}:3:18; a component has one binding per host`,
      },
      {
        code: "HL2004",
        line: 4,
        column: 24,
        message: `duplicate plugin version "gates@1.0.0": first declared at ${a}:4:24; declare each version of a plugin once`,
      },
      {
        code: "HL2014",
        line: 5,
        column: 64,
        message:
          'unknown component "gaet" in a requirement of composition "run" (did you mean "gate"?); declare it with "component gaet { kind … }"',
      },
    ]);
  });
});

describe("syntax error recovery", () => {
  it("reports one diagnostic for one mistake, not a cascade", () => {
    const { diagnostics } = compileHarness(
      "component a {\n  kind skill\n  input { x y\n  output { z }\n}\ncomponent b { kind tool }\n",
    );
    expect(located(diagnostics)).toEqual([{ code: "HL1010", line: 4, column: 3 }]);
    expect(diagnostics[0]?.message).toBe(
      'expected "}" to close the input list opened at 3:9, found "output"',
    );
  });

  it("recovers at the top level from text that is not a declaration", () => {
    const { diagnostics } = compileHarness("hello world\ncomponent a { kind skill }\n}\n");
    expect(diagnostics.map((d) => [d.code, d.line, d.column, d.message])).toEqual([
      [
        "HL1005",
        1,
        1,
        'expected a declaration ("component", "binding", "plugin" or "composition") at the top level, found "hello"',
      ],
      ["HL1005", 3, 1, 'unexpected "}": no block is open here'],
    ]);
  });

  it("reports a block left open at the end of the file", () => {
    const { diagnostics } = compileHarness("composition c {\n  target pi\n");
    expect(diagnostics.map((d) => [d.code, d.line, d.column, d.message])).toEqual([
      [
        "HL1010",
        3,
        1,
        'expected "}" to close the composition block opened at 1:15, found end of file',
      ],
    ]);
  });

  it("says what was expected when a value is missing before the next clause", () => {
    const { diagnostics } = compileHarness("binding a for pi {\n  mechanism\n  strength wired\n}");
    expect(diagnostics.map((d) => [d.code, d.line, d.column, d.message])).toEqual([
      [
        "HL2014",
        1,
        9,
        'unknown component "a" in a binding; declare it with "component a { kind … }"',
      ],
      ["HL1005", 3, 3, 'expected a mechanism name after "mechanism", found "strength"'],
    ]);
  });

  it("reports a missing minimum, and a preferred strength below the minimum", () => {
    const { diagnostics } = compileHarness(withComposition("  require gate { preferred wired }\n"));
    expect(located(diagnostics)).toEqual([{ code: "HL1009", line: 8, column: 11 }]);
    const below = compileHarness(
      withComposition("  require gate { minimum enforced preferred advisory }\n"),
    );
    expect(below.diagnostics.map((d) => [d.code, d.line, d.column])).toEqual([["HL2013", 8, 45]]);
  });

  it("rejects an empty or malformed include range", () => {
    const { diagnostics } = compileHarness(
      withComposition("", "").replace("plugin.gates@1", "plugin.gates@ , plugin.gates@^latest"),
    );
    expect(diagnostics.map((d) => [d.code, d.message])).toEqual([
      ["HL1005", 'expected a version after "@" (e.g. @1, @^1.2, @~1.2.3, @1.2.0), found ","'],
      [
        "HL2012",
        'include range "@^latest" of plugin "gates" is not a valid semver range: write @ then an optional ~ or ^ and a version, e.g. @1, @^1.2, @~1.2.3 or @1.2.0',
      ],
    ]);
  });
});

describe("every diagnostic code", () => {
  it("is documented in docs/language.md", async () => {
    const { readFile } = await import("node:fs/promises");
    const docs = await readFile(new URL("../../docs/language.md", import.meta.url), "utf8");
    for (const code of Object.keys(DIAGNOSTIC_CODES)) expect(docs, code).toContain(`| ${code} |`);
  });

  it("is produced by some program (none is dead)", () => {
    const programs = [
      ["syntax-errors.harness"],
      ["lexical-errors.harness"],
      ["unclosed-block.harness"],
      ["structure-errors.harness"],
      ["inheritance-errors.harness"],
      ["deep-extends.harness"],
      ["duplicates.harness"],
      ["warnings.harness"],
      ["cross-file-a.harness", "cross-file-b.harness"],
      ["v02-clauses.harness"],
    ];
    const seen = new Set(
      programs.flatMap((files) => compileFixtures(...files).diagnostics.map((d) => d.code)),
    );
    const conformance = [
      "HL2002",
      "HL2005",
      "HL2006",
      "HL2007",
      "HL2009",
      "HL2010",
      "HL2011",
      "HL2012",
      "HL2013",
      "HL2015",
    ];
    for (const code of conformance) seen.add(code);
    expect([...seen].sort()).toEqual(Object.keys(DIAGNOSTIC_CODES).sort());
  });
});

describe("formatDiagnostic", () => {
  const source = "component gate {\n\tkind gadget\n}\n";
  const diagnostic = compileHarness([{ uri: "a.harness", text: source }]).diagnostics[0]!;

  it("renders file:line:col, severity, code and message", () => {
    expect(formatDiagnostic(diagnostic)).toBe(
      'a.harness:2:7: error HL1006 expected one of "skill", "tool", "program", "workflow", "hook", "policy", "observer", "ui", "instructions" or "subagent" after "kind", found "gadget"',
    );
  });

  it("adds the offending source line and a caret under the offending text, keeping tabs", () => {
    const lines = formatDiagnostic(diagnostic, source).split("\n");
    expect(lines.slice(1)).toEqual(["    2 | \tkind gadget", "      | \t     ^^^^^^"]);
  });

  it("renders only the head when the line is not in the given text", () => {
    const elsewhere = { ...diagnostic, line: 99 };
    expect(formatDiagnostic(elsewhere, source)).toBe(formatDiagnostic(elsewhere));
  });
});

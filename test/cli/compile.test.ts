import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compileHarness } from "../../src/language/index.js";
import { runHarness } from "../support/cli.js";

const CONTRACTS = `component gate {
  kind policy
  description "Stop when tests fail."
}
`;
const REST = `binding gate for pi { mechanism stop-hook strength enforced }
plugin gates { version "1.0.0" provides [ component.gate ] }
composition lenient { target pi include [ plugin.gates@1 ] require gate { preferred enforced minimum advisory } }
composition strict { target pi include [ plugin.gates@1 ] require gate { preferred enforced minimum advisory on-degrade fail } }
`;
const BROKEN = `component gate {
  kind gadget
}
binding gate pi { }
`;

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "harness-cli-compile-"));
  await mkdir(join(dir, "src"));
  await writeFile(join(dir, "src", "contracts.harness"), CONTRACTS);
  await writeFile(join(dir, "src", "rest.harness"), REST);
  await writeFile(join(dir, "broken.harness"), BROKEN);
  await writeFile(join(dir, "warn.harness"), `${CONTRACTS}binding gate for qoder-cli\n`);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("harness compile", () => {
  it("compiles several files relative to the working directory and prints a summary", async () => {
    const run = await runHarness(["compile", "src/contracts.harness", "src/rest.harness"], dir);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toBe(
      "compiled 2 files: 1 component, 1 binding, 1 plugin (1 version), 2 compositions: lenient, strict\n",
    );
    expect(run.stderr).toBe("");
  });

  it("prints only the bundle on stdout with --json, equal to the library's result", async () => {
    const run = await runHarness(
      ["compile", "src/contracts.harness", "src/rest.harness", "--json"],
      dir,
    );
    expect(run.exitCode).toBe(0);
    const expected = compileHarness([
      { uri: "src/contracts.harness", text: CONTRACTS },
      { uri: "src/rest.harness", text: REST },
    ]).bundle;
    expect(JSON.parse(run.stdout)).toEqual(expected);
  });

  it("exits 1 and prints each diagnostic with its source line and a caret on stderr", async () => {
    const run = await runHarness(["compile", "broken.harness"], dir);
    expect(run.exitCode).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toBe(
      [
        'broken.harness:2:8: error HL1006 expected one of "skill", "tool", "program", "workflow", "hook", "policy", "observer", "ui", "instructions" or "subagent" after "kind", found "gadget"',
        "    2 |   kind gadget",
        "      |        ^^^^^^",
        "",
        'broken.harness:4:14: error HL1005 expected "for" after "binding gate", found "pi"',
        "    4 | binding gate pi { }",
        "      |              ^^",
        "",
        "2 errors",
        "",
      ].join("\n"),
    );
  });

  it("prints the diagnostics as JSON on stdout with --json and exits 1", async () => {
    const run = await runHarness(["compile", "broken.harness", "--json"], dir);
    expect(run.exitCode).toBe(1);
    const document = JSON.parse(run.stdout) as { diagnostics: Array<Record<string, unknown>> };
    expect(document.diagnostics.map((d) => [d.uri, d.line, d.column, d.code, d.severity])).toEqual([
      ["broken.harness", 2, 8, "HL1006", "error"],
      ["broken.harness", 4, 14, "HL1005", "error"],
    ]);
  });

  it("prints warnings on stderr and still succeeds", async () => {
    const run = await runHarness(["compile", "warn.harness", "--json"], dir);
    expect(run.exitCode).toBe(0);
    expect(JSON.parse(run.stdout).kind).toBe("harness-ir-bundle");
    expect(run.stderr).toContain("warn.harness:5:18: warning HL3001");
  });

  it("exits 2 naming a file that does not exist", async () => {
    const run = await runHarness(["compile", "missing.harness"], dir);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toBe("harness: missing.harness: file not found\n");
  });

  it("exits 2 when no file is given", async () => {
    const run = await runHarness(["compile"], dir);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain("missing required argument");
  });
});

describe("harness resolve", () => {
  const files = ["src/contracts.harness", "src/rest.harness"];

  it("prints the revision and report as JSON and exits 0 when the composition resolves", async () => {
    const run = await runHarness(["resolve", ...files, "--composition", "lenient", "--json"], dir);
    expect(run.exitCode).toBe(0);
    const result = JSON.parse(run.stdout);
    expect(result.report.status).toBe("resolved");
    expect(result.revision.revisionId).toMatch(/^hr_[0-9a-f]{32}$/);
    expect(result.report.realizations[0].action).toBe("degraded");
  });

  it("prints a readable summary without --json", async () => {
    const run = await runHarness(["resolve", ...files, "--composition", "lenient"], dir);
    expect(run.exitCode).toBe(0);
    const lines = run.stdout.split("\n");
    expect(lines[0]).toMatch(
      /^resolved composition lenient for host pi: revision hr_[0-9a-f]{32}$/,
    );
    expect(lines[1]).toBe(
      "  degraded  gate  advisory via prompt-preamble (host 'pi' declares 'enforced' via 'stop-hook', but the v0.1 executor materializes prompt guidance at 'advisory' strength)",
    );
    expect(lines[2]).toBe("permissions: (none)");
  });

  it("exits 1 with the errors on stderr when resolution fails", async () => {
    const run = await runHarness(["resolve", ...files, "--composition", "strict"], dir);
    expect(run.exitCode).toBe(1);
    expect(run.stdout).toContain("composition strict for host pi failed to resolve");
    // The error is the reference implementation's, word for word; the fix line is ours.
    expect(run.stderr).toBe(
      "error: Component 'gate' realizes 'advisory' on host 'pi', below the preferred 'enforced' and the requirement declares 'on-degrade fail'.\n" +
        "fix: gate: lower its `preferred` to 'advisory' or make it `on-degrade report` in the composition, or bind it for this host with a mechanism its executor realizes at 'enforced' or stronger (docs/language.md#strengths-degradation-and-resolution)\n",
    );
    const json = await runHarness(["resolve", ...files, "--composition", "strict", "--json"], dir);
    expect(json.exitCode).toBe(1);
    expect(JSON.parse(json.stdout).revision).toBeUndefined();
  });

  it("resolves for another host with --host", async () => {
    const run = await runHarness(
      ["resolve", ...files, "--composition", "lenient", "--host", "codex", "--json"],
      dir,
    );
    const result = JSON.parse(run.stdout);
    expect(result.report.target).toBe("codex");
    // gate has no codex binding: realized unsupported, below the minimum advisory.
    expect(run.exitCode).toBe(1);
    expect(result.report.errors).toEqual([
      "Component 'gate' realizes 'unsupported' on host 'codex', below the required minimum 'advisory'.",
    ]);
    const text = await runHarness(
      ["resolve", ...files, "--composition", "lenient", "--host", "codex"],
      dir,
    );
    expect(text.stderr).toContain(
      "fix: gate: lower its `minimum` to 'unsupported' in the composition, or bind gate for this host (`binding gate for <host> { mechanism … strength … }`)",
    );
  });

  it("points a requirement no included plugin provides at the plugin that does", async () => {
    await writeFile(
      join(dir, "unprovided.harness"),
      `component a { kind workflow description "A" }
component b { kind workflow description "B" }
binding a for scripted { mechanism prompt-preamble strength advisory }
binding b for scripted { mechanism prompt-preamble strength advisory }
plugin p { version "1.0.0" provides [ component.a ] }
plugin q { version "1.2.0" provides [ component.b ] }
plugin q { version "2.0.1" provides [ component.b ] }
composition c { target scripted include [ plugin.p@^1 ] require a { minimum advisory } require b { minimum advisory } }
`,
    );
    const run = await runHarness(["resolve", "unprovided.harness", "--composition", "c"], dir);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toBe(
      "error: Required component 'b' is not provided by any included plugin.\n" +
        "fix: b: include a plugin that provides it (`plugin.q@^2` in the composition's `include`), or drop the `require b` (docs/language.md#strengths-degradation-and-resolution)\n",
    );
  });

  it("exits 2 listing the allowed hosts for an unknown --host", async () => {
    const run = await runHarness(
      ["resolve", ...files, "--composition", "lenient", "--host", "claude"],
      dir,
    );
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toBe(
      'harness: --host "claude" is not a known host; use one of qoder, pi, claude-code, codex, scripted\n',
    );
  });

  it("exits 2 listing the declared compositions for an unknown --composition", async () => {
    const run = await runHarness(["resolve", ...files, "--composition", "nope"], dir);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toBe(
      'harness: --composition "nope" is not declared in src/contracts.harness, src/rest.harness; use one of lenient, strict\n',
    );
  });

  it("exits 2 without --composition, and 1 with diagnostics when the files do not compile", async () => {
    const missing = await runHarness(["resolve", ...files], dir);
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toContain("--composition");
    const broken = await runHarness(["resolve", "broken.harness", "--composition", "x"], dir);
    expect(broken.exitCode).toBe(1);
    expect(broken.stderr).toContain("broken.harness:2:8: error HL1006");
  });
});

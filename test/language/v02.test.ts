// `.harness` v0.2: components that carry what they are. A program with source, mcp, hook and
// tools compiles to IR 0.2.0 whose every document its published schema accepts; a source file's
// bytes are in the revision id; the CLI reads sources next to the .harness file.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { irSchemasV2 } from "../../src/ir/index.js";
import { compileHarness } from "../../src/language/index.js";
import { resolveComposition } from "../../src/resolver/index.js";
import { readHarnessSource } from "../../src/shared/index.js";
import { runHarness } from "../support/cli.js";

const PROGRAM = `component conventions {
  kind skill
  description "Project conventions"
  source "skills/conventions"
}
component rules { kind instructions source "CLAUDE.md" }
component lookup {
  kind tool
  mcp { command "node" args ["mcp/server.mjs", "--quiet"] env { LOOKUP_MODE "offline" } }
}
component stop-check { kind hook hook { event Stop command ["node", "hooks/stop.mjs"] } }
component tea {
  kind tool
  cli { command "tea" args ["--output", "json"] env { GITEA_INSTANCE_URL "\${forge.url}" GITEA_TOKEN "\${forge.token}" } }
}
component reviewer { kind subagent source "reviewer.md" tools [Read, Grep] }
binding conventions for scripted { mechanism prompt-preamble strength advisory }
plugin kit {
  version "1.0.0"
  provides [ component.conventions, component.rules, component.lookup, component.stop-check, component.tea, component.reviewer ]
}
composition setup { target scripted include [ plugin.kit@^1 ] require conventions }
`;

const SKILL = `---
name: project-conventions
description: How this project names things. Use when changing code here.
---
Use kebab-case file names.
`;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "hl-v02-"));
  await mkdir(join(dir, "skills", "conventions"), { recursive: true });
  await writeFile(join(dir, "skills", "conventions", "SKILL.md"), SKILL);
  await writeFile(join(dir, "skills", "conventions", "naming.md"), "# Naming\n");
  await writeFile(join(dir, "CLAUDE.md"), "# Rules\nRun the tests.\n");
  await writeFile(join(dir, "reviewer.md"), "Review the diff for missing tests.\n");
  await writeFile(join(dir, "setup.harness"), PROGRAM);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

function compile(text = PROGRAM) {
  return compileHarness([{ uri: join(dir, "setup.harness"), text }], {
    readSource: readHarnessSource,
  });
}

describe(".harness v0.2", () => {
  it("compiles source, mcp, cli, hook and tools to IR 0.2.0 that its published schemas accept", () => {
    const { bundle, diagnostics } = compile();
    expect(diagnostics).toEqual([]);
    expect(bundle?.irVersion).toBe("0.2.0");
    expect(irSchemasV2.bundle.safeParse(bundle).success).toBe(true);
    const byId = new Map(bundle!.components.map((c) => [c.id, c]));
    expect(byId.get("conventions")?.source).toEqual({
      path: "skills/conventions",
      type: "directory",
      files: [
        { path: "SKILL.md", sha256: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) },
        { path: "naming.md", sha256: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) },
      ],
      skill: {
        name: "project-conventions",
        description: "How this project names things. Use when changing code here.",
      },
    });
    expect(byId.get("lookup")?.mcp).toEqual({
      command: "node",
      args: ["mcp/server.mjs", "--quiet"],
      env: [{ name: "LOOKUP_MODE", value: "offline" }],
    });
    expect(byId.get("tea")?.cli).toEqual({
      command: "tea",
      args: ["--output", "json"],
      env: [
        { name: "GITEA_INSTANCE_URL", value: "${forge.url}" },
        { name: "GITEA_TOKEN", value: "${forge.token}" },
      ],
    });
    expect(byId.get("stop-check")?.hook).toEqual({
      event: "Stop",
      command: ["node", "hooks/stop.mjs"],
    });
    expect(byId.get("reviewer")).toMatchObject({
      componentKind: "subagent",
      tools: ["Read", "Grep"],
    });
    const { revision, report } = resolveComposition(bundle!, "setup");
    expect(revision?.irVersion).toBe("0.2.0");
    expect(report.irVersion).toBe("0.2.0");
    expect(irSchemasV2.revision.safeParse(revision).success).toBe(true);
  });

  it("puts a source file's bytes in the revision id", async () => {
    const before = resolveComposition(compile().bundle!, "setup").revision?.revisionId;
    await writeFile(join(dir, "skills", "conventions", "naming.md"), "# Naming\nUse snake_case.\n");
    const after = resolveComposition(compile().bundle!, "setup").revision?.revisionId;
    expect(after).toMatch(/^hr_[0-9a-f]{32}$/);
    expect(after).not.toBe(before);
  });

  it("refuses a source reached through a symbolic link out of the folder", async () => {
    const { symlink } = await import("node:fs/promises");
    await symlink(tmpdir(), join(dir, "elsewhere"));
    const { bundle, diagnostics } = compile(
      `${PROGRAM}component leak { kind workflow source "elsewhere" }\n`,
    );
    expect(bundle).toBeUndefined();
    expect(diagnostics.map((d) => d.code)).toEqual(["HL2025"]);
    expect(diagnostics[0]?.message).toMatch(/resolves to .* outside .* \(a symbolic link\)/);
  });

  it("compiles from the CLI, reading sources next to the .harness file whatever the working directory", async () => {
    const run = await runHarness(["compile", join(dir, "setup.harness"), "--json"], tmpdir());
    expect(run.exitCode, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout).irVersion).toBe("0.2.0");
    const relative = await runHarness(["compile", "setup.harness", "--json"], dir);
    expect(relative.exitCode, relative.stderr).toBe(0);
  });

  it("without a source reader, says a source cannot be read rather than guessing", () => {
    const { bundle, diagnostics } = compileHarness([{ uri: "setup.harness", text: PROGRAM }]);
    expect(bundle).toBeUndefined();
    expect(new Set(diagnostics.map((d) => d.code))).toEqual(new Set(["HL2025"]));
  });
});

// Materializing a variant's setup for one trial: exactly the bytes the revision pinned, copied
// read-only beside the trial, with `${source}` filled in the commands; anything else is refused.
import { createHash } from "node:crypto";
import { chmod, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { PlannedSetupComponent } from "../../src/compare/run/assemble.js";
import {
  materializeSetup,
  SetupMaterializeError,
  setupIntact,
} from "../../src/compare/trial/setup.js";
import { removeTree } from "../../src/workspace/temp.js";

let base: string;

beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), "hl-materialize-"));
});

afterEach(async () => {
  await removeTree(base);
});

const sha256 = (text: string) => `sha256:${createHash("sha256").update(text).digest("hex")}`;

async function plannedServer(files: Record<string, string>): Promise<PlannedSetupComponent> {
  const sourcePath = join(base, "src", "lookup");
  for (const [name, content] of Object.entries(files)) {
    await mkdir(join(sourcePath, name, ".."), { recursive: true });
    await writeFile(join(sourcePath, name), content);
  }
  return {
    contract: {
      irVersion: "0.2.0",
      kind: "component-contract",
      id: "lookup",
      componentKind: "tool",
      inputs: [],
      outputs: [],
      permissions: [],
      source: {
        path: "lookup",
        type: "directory",
        files: Object.entries(files).map(([path, content]) => ({ path, sha256: sha256(content) })),
      },
      mcp: {
        command: "node",
        args: ["${source}/server.mjs", "--data=${source}/lib/data.json"],
        env: [{ name: "LOOKUP_HOME", value: "${source}" }],
      },
    },
    mechanism: "mcp-server",
    strength: "wired",
    onDegrade: "fail",
    sourcePath,
  };
}

describe("materializeSetup", () => {
  it("copies the pinned files read-only and fills ${source} in the command", async () => {
    const planned = await plannedServer({ "server.mjs": "// server\n", "lib/data.json": "{}\n" });
    const dir = join(base, "setup");
    const [component] = await materializeSetup([planned], dir);
    const home = join(dir, "lookup");
    expect(component).toMatchObject({
      id: "lookup",
      mechanism: "mcp-server",
      onDegrade: "fail",
      source: { path: home, type: "directory" },
      mcp: {
        command: "node",
        args: [`${home}/server.mjs`, `--data=${home}/lib/data.json`],
        env: { LOOKUP_HOME: home },
      },
    });
    expect(await readFile(join(home, "lib", "data.json"), "utf8")).toBe("{}\n");
    expect((await stat(join(home, "server.mjs"))).mode & 0o222).toBe(0);
    expect((await stat(join(home, "lib"))).mode & 0o222).toBe(0);
    expect((await stat(home)).mode & 0o222).toBe(0);
    expect(await setupIntact([component!])).toEqual(new Map([["lookup", true]]));
  });

  it("refuses a source edited since the run started: the revision pinned other bytes", async () => {
    const planned = await plannedServer({ "server.mjs": "// server\n" });
    await writeFile(join(planned.sourcePath!, "server.mjs"), "// edited\n");
    await expect(materializeSetup([planned], join(base, "setup"))).rejects.toThrow(
      SetupMaterializeError,
    );
    await expect(materializeSetup([planned], join(base, "setup2"))).rejects.toThrow(
      /component lookup: its source file .*server\.mjs changed since the run started/,
    );
  });

  it("refuses a source file replaced by a symbolic link", async () => {
    const planned = await plannedServer({ "server.mjs": "// server\n" });
    await rm(join(planned.sourcePath!, "server.mjs"));
    await writeFile(join(base, "elsewhere.mjs"), "// server\n");
    await symlink(join(base, "elsewhere.mjs"), join(planned.sourcePath!, "server.mjs"));
    await expect(materializeSetup([planned], join(base, "setup"))).rejects.toThrow(
      /is a symbolic link/,
    );
  });

  it("notices a materialized file that changed after the run", async () => {
    const planned = await plannedServer({ "server.mjs": "// server\n" });
    const [component] = await materializeSetup([planned], join(base, "setup"));
    const file = join(base, "setup", "lookup", "server.mjs");
    await chmod(join(base, "setup", "lookup"), 0o755);
    await rm(file, { force: true });
    await writeFile(file, "// changed\n");
    expect(await setupIntact([component!])).toEqual(new Map([["lookup", false]]));
  });
});

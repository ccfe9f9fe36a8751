// Inputs that used to end in a stack trace, an endless loop, silent data loss or a flooded
// terminal: each gets a clear error naming what is wrong, exit 2, and nothing written.
import { spawnSync } from "node:child_process";
import { mkdir, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixtureIrregularEntries } from "../../src/compare/manifest/index.js";
import { formatDiagnostic } from "../../src/language/format.js";
import { compileHarness } from "../../src/language/index.js";
import { listTree } from "../fixtures/manifests/workspace.js";
import { runHarness } from "../support/cli.js";
import { makeExperiment, syntheticManifest, type TempExperiment } from "../support/experiment.js";

const REPO = fileURLToPath(new URL("../../", import.meta.url));
const CLI = join(REPO, "src", "cli", "bin.ts");

let exp: TempExperiment;

beforeAll(async () => {
  exp = await makeExperiment();
});
afterAll(() => exp.cleanup());

/**
 * Runs the real CLI inside a bubblewrap view of this machine where `dir` is mounted as the test
 * needs (read-only, or a tiny tmpfs): the only way to make a directory unwritable for root.
 */
function cliWithMount(mount: string[], args: string[]) {
  const result = spawnSync(
    "bwrap",
    [
      "--bind",
      "/",
      "/",
      "--dev-bind",
      "/dev",
      "/dev",
      "--proc",
      "/proc",
      ...mount,
      "--",
      process.execPath,
      "--import",
      "tsx",
      CLI,
      ...args,
    ],
    { cwd: REPO, encoding: "utf8", env: process.env },
  );
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe("a bad --out", () => {
  it("on a read-only file system: exit 2, saying so, nothing written", async () => {
    const dir = join(exp.base, "read-only");
    await mkdir(dir);
    const result = cliWithMount(
      ["--ro-bind", dir, dir],
      ["compare", "run", exp.manifestPath, "--out", join(dir, "run")],
    );
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain("is on a read-only file system");
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(await readdir(dir)).toEqual([]);
  });

  it("on a full file system: exit 2, saying so", async () => {
    const dir = join(exp.base, "full");
    await mkdir(dir);
    const result = cliWithMount(
      ["--size", "65536", "--tmpfs", dir],
      ["compare", "run", exp.manifestPath, "--out", join(dir, "run")],
    );
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain("has no space left");
  });

  it("under /proc: refused at once (it used to loop forever)", async () => {
    const run = await runHarness([
      "compare",
      "run",
      exp.manifestPath,
      "--out",
      "/proc/harness-run",
    ]);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain("kernel pseudo-filesystem (/proc)");
  });
});

describe("a bad manifest", () => {
  it("with a key given twice: names the key and both lines, and runs nothing", async () => {
    const manifest = join(exp.dir, "twice.json");
    const text = JSON.stringify(syntheticManifest(), null, 2).replace(
      '"concurrency": 2',
      '"concurrency": 2,\n  "concurrency": 1',
    );
    await writeFile(manifest, text);
    const line = text.split("\n").findIndex((l) => l.includes('"concurrency": 1')) + 1;
    const out = join(exp.base, "twice-out");
    for (const command of [["validate"], ["run", "--out", out]]) {
      const run = await runHarness(["compare", command[0]!, manifest, ...command.slice(1)]);
      expect(run.exitCode).toBe(command[0] === "validate" ? 1 : 2);
      expect(run.stderr).toContain(
        `concurrency: duplicate key "concurrency" on line ${line} (first on line ${line - 1})`,
      );
    }
    await expect(readdir(out)).rejects.toThrow();
  });

  it("with an expected file that is .git in another letter case: refused by validate as by run", async () => {
    const manifest = join(exp.dir, "git-case.json");
    const task = (syntheticManifest().tasks as Array<Record<string, unknown>>)[0]!;
    await writeFile(
      manifest,
      JSON.stringify(
        syntheticManifest({
          tasks: [{ ...task, expectedFiles: ["src/value.txt", ".GIT/config"] }],
        }),
      ),
    );
    const run = await runHarness(["compare", "validate", manifest]);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain(
      'tasks[0].expectedFiles[1]: ".GIT/config" is inside .git (in any letter case)',
    );
  });

  it("whose fixture is the file system root, or a tree far too large: refused without walking it all", async () => {
    // A manifest at the root of a file system view of its own, whose fixture is "." (the root).
    const manifest = join(exp.base, "at-root.json");
    const task = (syntheticManifest().tasks as Array<Record<string, unknown>>)[0]!;
    await writeFile(
      manifest,
      JSON.stringify(syntheticManifest({ tasks: [{ ...task, fixture: "." }] })),
    );
    const result = spawnSync(
      "bwrap",
      [
        "--tmpfs",
        "/",
        "--ro-bind",
        "/usr",
        "/usr",
        "--symlink",
        "usr/bin",
        "/bin",
        "--symlink",
        "usr/lib",
        "/lib",
        "--symlink",
        "usr/lib64",
        "/lib64",
        "--ro-bind",
        "/etc",
        "/etc",
        "--bind",
        "/tmp",
        "/tmp",
        "--ro-bind",
        REPO,
        REPO,
        "--ro-bind",
        manifest,
        "/experiment.json",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--chdir",
        REPO,
        "--",
        process.execPath,
        "--import",
        "tsx",
        CLI,
        "compare",
        "validate",
        "/experiment.json",
      ],
      { encoding: "utf8", env: process.env },
    );
    expect(result.status, result.stderr).toBe(1);
    expect(result.stderr).toContain('tasks[0].fixture: "." is the file system root (/)');
    // The walk itself gives up early on a tree that is not a repository.
    const found = await fixtureIrregularEntries("/usr", { maxEntries: 10 });
    expect(found.some((entry) => entry.kind === "too-many")).toBe(true);
  });
});

describe("a bad .harness file", () => {
  it("shows terminal control characters escaped, never raw", () => {
    const source = "component a {\n  kind \u001b[31mskill\u001b]0;pwned\u0007\n}\n";
    const { diagnostics } = compileHarness([{ uri: "binary.harness", text: source }]);
    const printed = diagnostics.map((d) => formatDiagnostic(d, source)).join("\n");
    expect(printed).toContain("\\x1b[31mskill\\x1b]0;pwned\\x07");
    expect(printed).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
  });

  it("with an 8,000-deep extends chain: one clear error, at once", () => {
    const lines = ["composition c0 { target scripted }"];
    for (let i = 1; i <= 8000; i += 1) lines.push(`composition c${i} extends c${i - 1} { }`);
    const { diagnostics, bundle } = compileHarness(lines.join("\n"));
    expect(bundle).toBeUndefined();
    const deep = diagnostics.filter((d) => d.code === "HL2020");
    expect(deep).toHaveLength(1);
    expect(deep[0]?.message).toContain('composition "c33" has more than 32 ancestors');
  });
});

describe("--resume into a folder that is not a run", () => {
  it("is refused, and the user's files stay as they were", async () => {
    const dir = join(exp.base, "users-folder");
    await mkdir(dir);
    await writeFile(join(dir, "thesis.md"), "years of work\n");
    const before = await listTree(dir);
    const run = await runHarness(["compare", "run", exp.manifestPath, "--out", dir, "--resume"]);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain("no run harnesslab started");
    expect(await listTree(dir)).toEqual(before);
  });
});

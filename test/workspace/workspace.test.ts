import { createHash } from "node:crypto";
import {
  chmod,
  cp,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rm,
  stat,
  symlink,
  unlink,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { minimalEnv, runCommand } from "../../src/shared/index.js";
import {
  applyPatch,
  type BaselineArea,
  capturePatch,
  cheapToHash,
  createBaselineArea,
  createTrialWorkspace,
  diffSnapshots,
  replaceTrialRoot,
  type SharedBaseline,
  snapshotTree,
  type TreeSnapshot,
  type TrialWorkspace,
  treeSnapshotSchema,
  unpatchableEntries,
  WorkspaceError,
} from "../../src/workspace/index.js";

let base: string;
let fixture: string;
let temps: string;
const open: TrialWorkspace[] = [];

async function writeTree(dir: string, files: Record<string, string | Buffer>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(dir, path, ".."), { recursive: true });
    await writeFile(join(dir, path), content);
  }
}

async function trial(): Promise<TrialWorkspace> {
  const workspace = await createTrialWorkspace(fixture, { tempParent: temps });
  open.push(workspace);
  return workspace;
}

let area: BaselineArea | undefined;
let shared: SharedBaseline | undefined;

/** A workspace made from the fixture's shared baseline (built on first use, in its own area). */
async function sharedTrial(): Promise<TrialWorkspace> {
  if (shared === undefined) {
    await mkdir(join(base, "areas"), { recursive: true });
    area = await createBaselineArea({ tempParent: join(base, "areas") });
    shared = await area.build(fixture, await snapshotTree(fixture));
  }
  const workspace = await createTrialWorkspace(fixture, { tempParent: temps, baseline: shared });
  open.push(workspace);
  return workspace;
}

async function gitOut(root: string, args: string[]): Promise<string> {
  const result = await runCommand(["git", ...args], {
    cwd: root,
    env: minimalEnv({ GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" }),
    timeoutMs: 30_000,
  });
  expect(result.exitCode, result.stderr).toBe(0);
  return result.stdout;
}

beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), "hl-ws-"));
  fixture = join(base, "fixture");
  temps = join(base, "temps");
  await mkdir(temps);
  await writeTree(fixture, {
    "package.json": '{"name":"demo","scripts":{"test":"node --test"}}\n',
    "src/index.js": "export const add = (a, b) => a - b;\n",
    "test/index.test.js": "// tests\n",
    "docs/old.md": "old\n",
    ".gitignore": "cache/\n",
    "cache/kept.txt": "ignored by git but part of the fixture\n",
  });
  await mkdir(join(fixture, "empty-dir"));
});

afterEach(async () => {
  for (const w of open.splice(0)) await w.cleanup();
  await area?.dispose();
  area = undefined;
  shared = undefined;
  await rm(base, { recursive: true, force: true });
});

describe("snapshotTree", () => {
  it("lists every file and directory with size and sha256, sorted, with a stable hash", async () => {
    const snapshot = await snapshotTree(fixture);
    expect(treeSnapshotSchema.parse(snapshot)).toEqual(snapshot);
    expect(snapshot.files.map((f) => f.path)).toEqual([
      ".gitignore",
      "cache",
      "cache/kept.txt",
      "docs",
      "docs/old.md",
      "empty-dir",
      "package.json",
      "src",
      "src/index.js",
      "test",
      "test/index.test.js",
    ]);
    expect(snapshot.files.find((f) => f.path === "docs/old.md")).toEqual({
      path: "docs/old.md",
      kind: "file",
      bytes: 4,
      sha256: createHash("sha256").update("old\n").digest("hex"),
      executable: false,
    });
    expect(snapshot.files.find((f) => f.path === "src")).toMatchObject({
      kind: "dir",
      sha256: null,
    });
    const copy = join(base, "copy");
    await cp(fixture, copy, { recursive: true });
    expect((await snapshotTree(copy)).hash).toBe(snapshot.hash);
    await writeFile(join(copy, "docs/old.md"), "new\n");
    expect((await snapshotTree(copy)).hash).not.toBe(snapshot.hash);
  });

  it("rejects a fixture containing a symlink, naming its path", async () => {
    await symlink("../package.json", join(fixture, "src", "link.json"));
    const error = await snapshotTree(fixture).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorkspaceError);
    expect(error).toMatchObject({ code: "fixture-symlink", evidence: { path: "src/link.json" } });
    expect((error as Error).message).toContain("src/link.json");
  });

  it("rejects a fixture carrying git metadata at any depth", async () => {
    await mkdir(join(fixture, "vendor", "lib", ".git"), { recursive: true });
    await expect(snapshotTree(fixture)).rejects.toMatchObject({
      code: "fixture-git-dir",
      evidence: { path: "vendor/lib/.git" },
    });
  });

  it("in trial mode skips the baseline repository and records symlinks a run left", async () => {
    const workspace = await trial();
    await symlink("package.json", join(workspace.root, "alias"));
    const snapshot = await snapshotTree(workspace.root, { mode: "trial" });
    expect(snapshot.files.some((f) => f.path === ".git" || f.path.startsWith(".git/"))).toBe(false);
    expect(snapshot.files.some((f) => f.path === ".gitignore")).toBe(true);
    expect(snapshot.files.find((f) => f.path === "alias")).toMatchObject({
      kind: "symlink",
      bytes: 12,
    });
  });

  it("gives up on a trial past its entry limit, as the trial's doing, even inside one huge directory", async () => {
    const workspace = await trial();
    const crowded = join(workspace.root, "crowded");
    await mkdir(crowded);
    for (let i = 0; i < 50; i++) await writeFile(join(crowded, `f${i}`), "");
    const error = await snapshotTree(workspace.root, { mode: "trial", maxEntries: 40 }).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: "too-many-entries", causedByTrial: true });
    expect(String((error as Error).message)).toContain("more than 40");
    // Under the limit the same tree is listed whole.
    const listed = await snapshotTree(workspace.root, { mode: "trial", maxEntries: 100 });
    expect(listed.files.filter((f) => f.path.startsWith("crowded/"))).toHaveLength(50);
  });

  it("reports a missing root as snapshot-failed", async () => {
    await expect(snapshotTree(join(base, "nope"))).rejects.toMatchObject({
      code: "snapshot-failed",
    });
  });
});

describe("cheapToHash", () => {
  const tree = (entries: number, bytesEach: number) => ({
    hash: "sha256:x",
    files: Array.from({ length: entries }, (_, i) => ({
      path: `f${i}`,
      kind: "file" as const,
      bytes: bytesEach,
      sha256: "0".repeat(64),
    })),
  });

  it("holds up to 2,000 entries and 2 MiB in all", () => {
    expect(cheapToHash(tree(2_000, 1_000))).toBe(true);
    expect(cheapToHash(tree(2_001, 0))).toBe(false);
    expect(cheapToHash(tree(2, 1024 * 1024))).toBe(true);
    expect(cheapToHash(tree(1, 2 * 1024 * 1024 + 1))).toBe(false);
    expect(cheapToHash(tree(0, 0))).toBe(true);
  });
});

describe("unpatchableEntries", () => {
  it("refuses two names that read as one (one not UTF-8), and accepts either alone", async () => {
    const root = join(base, "names");
    await mkdir(root);
    // A name that is U+FFFD in UTF-8, as a fixture may hold.
    await writeFile(join(root, "a\uFFFD"), "fixture\n");
    const alone = await snapshotTree(root, { mode: "trial" });
    expect(unpatchableEntries(alone)).toEqual([]);
    // And one whose byte 0xff is no UTF-8: it reads as the same name.
    await writeFile(Buffer.concat([Buffer.from(`${root}/a`), Buffer.from([0xff])]), "agent\n");
    const both = await snapshotTree(root, { mode: "trial" });
    expect(both.files.filter((f) => f.path === "a\uFFFD")).toHaveLength(2);
    expect(unpatchableEntries(both)).toEqual([
      { path: "a\uFFFD", reason: expect.stringMatching(/names two entries/) },
    ]);
    // Its change would not show as an added path, and git would not be asked to add it.
    expect(diffSnapshots(alone, both).added).toEqual([]);
  });
});

describe("diffSnapshots", () => {
  const entry = (path: string, sha: string, kind: "file" | "dir" | "symlink" = "file") => ({
    path,
    kind,
    bytes: kind === "dir" ? 0 : 1,
    sha256: kind === "dir" ? null : sha.repeat(64),
  });
  const snap = (files: ReturnType<typeof entry>[]): TreeSnapshot => ({
    files,
    hash: `sha256:${"0".repeat(64)}`,
  });

  it("lists added, modified and deleted files, ignoring directories", () => {
    const before = snap([entry("a", "1"), entry("b", "2"), entry("d", "", "dir"), entry("l", "3")]);
    const after = snap([
      entry("a", "1"),
      entry("c", "4"),
      entry("e", "", "dir"),
      entry("l", "3", "symlink"),
      entry("b", "5"),
    ]);
    expect(diffSnapshots(before, after)).toEqual({
      added: ["c"],
      modified: ["b", "l"],
      deleted: [],
    });
    expect(diffSnapshots(after, before)).toEqual({
      added: [],
      modified: ["b", "l"],
      deleted: ["c"],
    });
  });
});

describe("createTrialWorkspace", () => {
  it("copies the fixture into a fresh repository with one deterministic baseline commit", async () => {
    const first = await trial();
    const second = await trial();
    expect(first.root).not.toBe(second.root);
    expect((await snapshotTree(first.root, { mode: "trial" })).hash).toBe(
      (await snapshotTree(fixture)).hash,
    );
    const log = await gitOut(first.root, ["log", "--format=%H %an <%ae> %cn %at"]);
    expect(log.trim().split("\n")).toHaveLength(1);
    expect(log).toContain("harnesslab <harnesslab@localhost> harnesslab 946684800");
    // Same fixture, same identity, same date: same commit id.
    expect(await gitOut(second.root, ["rev-parse", "HEAD"])).toBe(
      await gitOut(first.root, ["rev-parse", "HEAD"]),
    );
    // The baseline holds the whole fixture, even what its .gitignore names.
    expect(await gitOut(first.root, ["ls-files"])).toContain("cache/kept.txt");
    expect(await gitOut(first.root, ["status", "--short"])).toBe("");
    expect(await readdir(join(first.root, ".git", "hooks")).catch(() => [])).toEqual([]);
    expect((await gitOut(first.root, ["config", "core.hooksPath"])).trim()).not.toBe("");
    const scratch = await stat(first.scratchDir);
    expect(scratch.isDirectory()).toBe(true);
    expect(first.scratchDir.startsWith(first.root)).toBe(false);
  });

  it("ignores the user's global git configuration and hooks", async () => {
    const evil = join(base, "evil");
    await mkdir(join(evil, "hooks"), { recursive: true });
    const marker = join(base, "hook-ran");
    await writeFile(join(evil, "hooks", "pre-commit"), `#!/bin/sh\ntouch ${marker}\n`);
    await chmod(join(evil, "hooks", "pre-commit"), 0o755);
    await writeFile(
      join(evil, "gitconfig"),
      `[user]\n\tname = Intruder\n[core]\n\thooksPath = ${join(evil, "hooks")}\n`,
    );
    const saved = { ...process.env };
    process.env.GIT_CONFIG_GLOBAL = join(evil, "gitconfig");
    process.env.GIT_AUTHOR_NAME = "Intruder";
    try {
      const workspace = await trial();
      expect(await gitOut(workspace.root, ["log", "--format=%an"])).toBe("harnesslab\n");
    } finally {
      process.env = saved;
    }
    await expect(stat(marker)).rejects.toThrow();
  });

  it("refuses a fixture with a symlink and leaves nothing behind", async () => {
    await symlink("/etc/passwd", join(fixture, "passwd"));
    await expect(createTrialWorkspace(fixture, { tempParent: temps })).rejects.toMatchObject({
      code: "fixture-symlink",
      evidence: { path: "passwd" },
    });
    expect(await readdir(temps)).toEqual([]);
  });

  it("reports a missing git as git-failed with evidence and leaves nothing behind", async () => {
    const savedPath = process.env.PATH;
    process.env.PATH = join(base, "no-bin");
    let error: unknown;
    try {
      error = await createTrialWorkspace(fixture, { tempParent: temps }).catch((e: unknown) => e);
    } finally {
      process.env.PATH = savedPath;
    }
    expect(error).toBeInstanceOf(WorkspaceError);
    expect(error).toMatchObject({
      code: "git-failed",
      evidence: { argv: expect.arrayContaining(["git", "init"]) },
    });
    expect(await readdir(temps)).toEqual([]);
  });

  it("scrubs both the trial path and the temp area from text", async () => {
    const workspace = await trial();
    const text = `cwd=${workspace.root}/src real=${workspace.realRoot} home=${workspace.scratchDir}`;
    expect(workspace.scrubPaths(text)).toBe(
      "cwd=<trial-root>/src real=<trial-root> home=<trial-temp>/scratch",
    );
  });

  it("cleans up everything, even directories a run made read-only, and may be called twice", async () => {
    const workspace = await trial();
    await mkdir(join(workspace.root, "locked"));
    await writeFile(join(workspace.root, "locked", "f"), "x");
    await chmod(join(workspace.root, "locked"), 0o500);
    await workspace.cleanup();
    await workspace.cleanup();
    expect(await readdir(temps)).toEqual([]);
  });

  it("cleans up a tree deeper than a path can name", async () => {
    const workspace = await trial();
    // 25 levels of 200 characters: past PATH_MAX (4096), made relative to the level above.
    const name = "d".repeat(200);
    const made = await runCommand(
      [
        "node",
        "-e",
        `const fs=require("fs");for(let i=0;i<25;i++){fs.mkdirSync(${JSON.stringify(name)});process.chdir(${JSON.stringify(name)});}fs.writeFileSync("f","x");`,
      ],
      { cwd: workspace.root, env: minimalEnv(), timeoutMs: 20_000 },
    );
    expect(made.exitCode, made.stderr).toBe(0);
    await workspace.cleanup();
    expect(await readdir(temps)).toEqual([]);
  });
});

describe("capturePatch", () => {
  it("captures additions, edits, deletions, mode changes and binary files as a patch that applies to a fresh fixture copy", async () => {
    const workspace = await trial();
    const root = workspace.root;
    await writeFile(join(root, "src/index.js"), "export const add = (a, b) => a + b;\n");
    await unlink(join(root, "docs/old.md"));
    await writeTree(root, {
      "docs/new guide.md": "# Guide\n",
      "docs/café.md": "# Café\n",
      "assets/logo.bin": Buffer.from([0, 1, 2, 255, 0, 7]),
      "latin1.txt": Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]),
      "cache/new.txt": "ignored: a validation cache\n",
    });
    await chmod(join(root, "test/index.test.js"), 0o755);

    const captured = await capturePatch(root);
    expect(captured.changedFiles).toEqual([
      "assets/logo.bin",
      "cache/new.txt",
      "docs/café.md",
      "docs/new guide.md",
      "docs/old.md",
      "latin1.txt",
      "src/index.js",
      "test/index.test.js",
    ]);
    expect(captured.stats).toMatchObject({ filesChanged: 8, binaryFiles: 1 });
    expect(captured.stats.insertions).toBe(5);
    expect(captured.stats.deletions).toBe(2);
    expect(captured.patch).toContain("diff --git a/src/index.js b/src/index.js");
    expect(captured.patch).toContain("GIT binary patch");

    const fresh = join(base, "fresh");
    await cp(fixture, fresh, { recursive: true });
    expect(await applyPatch(fresh, captured.patchBytes)).toEqual({ ok: true });
    const expected = (await snapshotTree(root, { mode: "trial" })).files;
    expect((await snapshotTree(fresh)).files).toEqual(expected);
    expect(await readFile(join(fresh, "latin1.txt"))).toEqual(
      Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]),
    );
    expect((await stat(join(fresh, "test/index.test.js"))).mode & 0o111).not.toBe(0);
  });

  it("returns an empty patch when nothing changed", async () => {
    const workspace = await trial();
    const captured = await capturePatch(workspace.root);
    expect(captured).toMatchObject({
      patch: "",
      changedFiles: [],
      stats: { filesChanged: 0, patchBytes: 0 },
    });
  });

  it("is a patch-failed error outside a trial repository", async () => {
    await expect(capturePatch(fixture)).rejects.toMatchObject({ code: "patch-failed" });
  });
});

/**
 * Runs `script` with node in the trial root, as a validation command such as `npm test` would run
 * agent-written code: same user, the repository's own git config, nothing of the harness's.
 */
async function runAsAgent(root: string, script: string): Promise<void> {
  const prelude = [
    'const { execFileSync } = require("node:child_process");',
    'const fs = require("node:fs");',
    'const git = (...args) => execFileSync("git", args, { encoding: "utf8" }).trim();',
  ].join("\n");
  const result = await runCommand([process.execPath, "-e", `${prelude}\n${script}`], {
    cwd: root,
    env: minimalEnv({ GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" }),
    timeoutMs: 30_000,
  });
  expect(result.exitCode, result.stderr).toBe(0);
}

/** A shell script that records that it ran by creating `marker`. */
async function markerScript(name: string, marker: string): Promise<string> {
  const script = join(base, name);
  await writeFile(script, `#!/bin/sh\necho ran >> ${JSON.stringify(marker)}\nexit 0\n`);
  await chmod(script, 0o755);
  return script;
}

// Every repository attack below runs against both kinds of trial repository: one whose copy was
// committed on its own, and one made from the run's shared baseline (packs linked, not written).
describe.skipIf(process.platform === "win32").each([
  ["a baseline of its own", trial],
  ["the run's shared baseline", sharedTrial],
] as const)(
  "capturePatch after code run in the trial changed its repository (%s)",
  (_kind, trial) => {
    it("runs no fsmonitor the trial planted and still reports a change the trial committed", async () => {
      const workspace = await trial();
      const marker = join(base, "fsmonitor-ran");
      const monitor = await markerScript("monitor.sh", marker);
      const originalConfig = await readFile(join(workspace.root, ".git", "config"), "utf8");
      await runAsAgent(
        workspace.root,
        `fs.writeFileSync("docs/old.md", "rewritten by the agent\\n");
       git("commit", "--quiet", "--all", "--message", "hide the change");
       fs.appendFileSync(".git/config", "[core]\\n\\tfsmonitor = ${monitor}\\n");`,
      );
      const captured = await workspace.capturePatch();
      expect(captured.changedFiles).toEqual(["docs/old.md"]);
      expect(captured.patch).toContain("+rewritten by the agent");
      await expect(stat(marker)).rejects.toThrow();
      expect(await readFile(join(workspace.root, ".git", "config"), "utf8")).toBe(originalConfig);
      expect(workspace.baselineCommit).toMatch(/^[0-9a-f]{40}$/);
    });

    it("overrides a planted fsmonitor even without a recorded baseline, though a plain git would run it", async () => {
      const workspace = await trial();
      const marker = join(base, "fsmonitor-ran");
      const monitor = await markerScript("monitor.sh", marker);
      await runAsAgent(
        workspace.root,
        `fs.writeFileSync("src/index.js", "changed\\n");
       fs.appendFileSync(".git/config", "[core]\\n\\tfsmonitor = ${monitor}\\n");`,
      );
      const captured = await capturePatch(workspace.root, { tempDir: base });
      expect(captured.changedFiles).toEqual(["src/index.js"]);
      await expect(stat(marker)).rejects.toThrow();
      // The planted setting is live: the agent's own git runs it.
      await gitOut(workspace.root, ["status", "--short"]);
      expect(await readFile(marker, "utf8")).toContain("ran");
    });

    it("runs no clean filter the trial defined and is not fooled by its index flags, info/exclude or replace refs", async () => {
      const workspace = await trial();
      const marker = join(base, "filter-ran");
      const filter = await markerScript("filter.sh", marker);
      await runAsAgent(
        workspace.root,
        `fs.writeFileSync("src/index.js", "export const add = (a, b) => a + b;\\n");
       git("update-index", "--skip-worktree", "src/index.js");
       fs.writeFileSync("src/extra.js", "new\\n");
       fs.mkdirSync(".git/info", { recursive: true });
       fs.writeFileSync(".git/info/exclude", "extra.js\\n");
       fs.writeFileSync("docs/old.md", "edited\\n");
       const baseline = git("rev-parse", "HEAD");
       git("commit", "--quiet", "--all", "--message", "replacement");
       git("replace", baseline, git("rev-parse", "HEAD"));
       fs.writeFileSync(".gitattributes", "* filter=evil\\n");
       fs.appendFileSync(".git/config", '[filter "evil"]\\n\\tclean = ${filter}\\n\\trequired = true\\n');`,
      );
      const captured = await workspace.capturePatch();
      expect(captured.changedFiles).toEqual([
        ".gitattributes",
        "docs/old.md",
        "src/extra.js",
        "src/index.js",
      ]);
      expect(captured.patch).toContain("+export const add = (a, b) => a + b;");
      await expect(stat(marker)).rejects.toThrow();
    });

    it("never writes through a config the trial replaced with a symlink", async () => {
      const workspace = await trial();
      const outside = join(base, "outside.txt");
      await writeFile(outside, "not the harness's\n");
      await runAsAgent(
        workspace.root,
        `fs.rmSync(".git/config");
       fs.symlinkSync(${JSON.stringify(outside)}, ".git/config");
       fs.writeFileSync("docs/old.md", "edited\\n");`,
      );
      const captured = await workspace.capturePatch();
      expect(captured.changedFiles).toEqual(["docs/old.md"]);
      expect(await readFile(outside, "utf8")).toBe("not the harness's\n");
    });

    it("removes an info/ the trial replaced with a link to a directory outside, without emptying that directory", async () => {
      const workspace = await trial();
      const outside = join(base, "outside-info");
      await mkdir(outside, { recursive: true });
      await writeFile(join(outside, "exclude"), "extra.js\n");
      await runAsAgent(
        workspace.root,
        `fs.rmSync(".git/info", { recursive: true, force: true });
       fs.symlinkSync(${JSON.stringify(outside)}, ".git/info");
       fs.writeFileSync("src/extra.js", "new\\n");`,
      );
      const captured = await workspace.capturePatch();
      // Its exclude file did not hide the new file, and the directory behind the link is intact.
      expect(captured.changedFiles).toEqual(["src/extra.js"]);
      expect(await readFile(join(outside, "exclude"), "utf8")).toBe("extra.js\n");
      expect((await lstat(join(workspace.root, ".git", "info"))).isDirectory()).toBe(true);
    });

    it("leaves the trial's own index as it was, so a grader's git sees the agent's staging", async () => {
      const workspace = await trial();
      await writeTree(workspace.root, { "src/new.js": "new\n", "src/index.js": "changed\n" });
      const index = join(workspace.root, ".git", "index");
      const before = await readFile(index);
      const captured = await workspace.capturePatch();
      expect(captured.changedFiles).toEqual(["src/index.js", "src/new.js"]);
      expect(await readFile(index)).toEqual(before);
      expect(await gitOut(workspace.root, ["status", "--short"])).toBe(
        " M src/index.js\n?? src/new.js\n",
      );
    });

    it("is a patch-failed error naming the commit when the baseline commit is gone", async () => {
      const workspace = await trial();
      const sha = workspace.baselineCommit;
      await rm(join(workspace.root, ".git", "objects"), { recursive: true });
      await mkdir(join(workspace.root, ".git", "objects"));
      const error = await workspace.capturePatch().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(WorkspaceError);
      expect(error).toMatchObject({
        code: "patch-failed",
        evidence: { commit: sha },
        causedByTrial: true,
      });
      expect((error as Error).message).toContain(sha);
    });

    it("is git-failed, not the trial's doing, when git fails outside the trial too", async () => {
      const workspace = await trial();
      await writeFile(join(workspace.root, "docs/old.md"), "edited\n");
      const fakeBin = join(base, "fake-bin");
      await mkdir(fakeBin);
      await writeFile(join(fakeBin, "git"), "#!/bin/sh\necho 'fatal: broken' >&2\nexit 128\n");
      await chmod(join(fakeBin, "git"), 0o755);
      const savedPath = process.env.PATH;
      process.env.PATH = `${fakeBin}:${savedPath}`;
      let error: unknown;
      try {
        error = await workspace.capturePatch().catch((e: unknown) => e);
      } finally {
        process.env.PATH = savedPath;
      }
      expect(error).toMatchObject({
        code: "git-failed",
        causedByTrial: false,
        evidence: { stderr: "fatal: broken\n", gitVersion: "fatal: broken\n" },
      });
      // With git working again, the same tree is captured.
      expect((await workspace.capturePatch()).changedFiles).toEqual(["docs/old.md"]);
    });

    it("reads no object store the trial borrowed: planted alternates are removed, not followed", async () => {
      const workspace = await trial();
      const borrowed = join(base, "borrowed-objects");
      await cp(join(workspace.root, ".git", "objects"), borrowed, { recursive: true });
      const objects = join(workspace.root, ".git", "objects");
      await rm(objects, { recursive: true });
      await mkdir(join(objects, "info"), { recursive: true });
      await writeFile(join(objects, "info", "alternates"), `${borrowed}\n`);
      await writeFile(join(objects, "info", "http-alternates"), "http://127.0.0.1:9/objects\n");
      // The agent's own git would take the baseline from the borrowed store.
      expect(
        (await gitOut(workspace.root, ["cat-file", "-t", workspace.baselineCommit])).trim(),
      ).toBe("commit");
      const error = await workspace.capturePatch().catch((e: unknown) => e);
      expect(error).toMatchObject({ code: "patch-failed", causedByTrial: true });
      expect(await readdir(join(objects, "info"))).toEqual([]);
    });

    it("follows no commondir the trial planted to another repository", async () => {
      const workspace = await trial();
      const other = join(base, "other");
      await writeTree(other, { "src/index.js": "something else entirely\n" });
      await gitOut(other, ["init", "--quiet"]);
      await gitOut(other, ["add", "--all"]);
      await gitOut(other, ["-c", "user.name=x", "-c", "user.email=x@x", "commit", "-qm", "other"]);
      await writeFile(join(workspace.root, ".git", "commondir"), `${join(other, ".git")}\n`);
      await writeFile(join(workspace.root, "docs/old.md"), "edited\n");
      const captured = await workspace.capturePatch();
      expect(captured.changedFiles).toEqual(["docs/old.md"]);
      await expect(stat(join(workspace.root, ".git", "commondir"))).rejects.toThrow();
    });

    it("refuses, and writes nothing through, an object directory the trial replaced with a link", async () => {
      const workspace = await trial();
      const elsewhere = join(base, "elsewhere");
      await cp(join(workspace.root, ".git", "objects"), elsewhere, { recursive: true });
      const before = await snapshotTree(elsewhere, { mode: "trial" });
      await rm(join(workspace.root, ".git", "objects"), { recursive: true });
      await symlink(elsewhere, join(workspace.root, ".git", "objects"));
      await writeFile(join(workspace.root, "docs/old.md"), "edited\n");
      await expect(workspace.capturePatch()).rejects.toMatchObject({
        code: "patch-failed",
        causedByTrial: true,
        evidence: { path: ".git/objects", kind: "symlink" },
      });
      expect((await snapshotTree(elsewhere, { mode: "trial" })).hash).toBe(before.hash);
    });
  },
);

describe("capturePatch covers every file that differs", () => {
  it("captures ignored files too: the fixture's .gitignore, a planted info/exclude and a global excludes file hide nothing", async () => {
    const workspace = await trial();
    await writeTree(workspace.root, {
      "cache/report.txt": "the agent's report\n",
      "cache/tool-cache.bin": "a validation command's cache\n",
      "cache/kept.txt": "edited\n",
      ".npmrc": "script-shell=/bin/true\n",
      ".gitignore": "cache/\n.npmrc\n.gitignore\n",
    });
    await mkdir(join(workspace.root, ".git", "info"), { recursive: true });
    await writeFile(join(workspace.root, ".git", "info", "exclude"), "*\n");
    const captured = await workspace.capturePatch();
    expect(captured.changedFiles).toEqual([
      ".gitignore",
      ".npmrc",
      "cache/kept.txt",
      "cache/report.txt",
      "cache/tool-cache.bin",
    ]);
    expect(captured.patch).toContain("+script-shell=/bin/true");
  });

  it("takes the bytes on disk: a .gitattributes the trial wrote converts nothing", async () => {
    const workspace = await trial();
    await writeTree(workspace.root, {
      ".gitattributes": "* text eol=crlf ident\n*.txt filter=evil -diff\n",
      "notes.txt": "line one\r\n$Id$\n",
    });
    const captured = await workspace.capturePatch();
    expect(captured.changedFiles).toEqual([".gitattributes", "notes.txt"]);
    const copy = join(base, "attributes-copy");
    await cp(fixture, copy, { recursive: true });
    expect(await applyPatch(copy, captured.patchBytes)).toEqual({ ok: true });
    expect(await readFile(join(copy, "notes.txt"), "utf8")).toBe("line one\r\n$Id$\n");
  });

  it("reads a file name literally, never as a pathspec pattern", async () => {
    const workspace = await trial();
    await writeTree(workspace.root, { "cache/[a].txt": "bracket\n", "cache/a.txt": "plain\n" });
    const captured = await workspace.capturePatch();
    expect(captured.changedFiles).toEqual(["cache/[a].txt", "cache/a.txt"]);
  });
});

describe("applyPatch", () => {
  it("refuses a patch that writes outside the directory", async () => {
    const patch = [
      "diff --git a/../escaped.txt b/../escaped.txt",
      "new file mode 100644",
      "--- /dev/null",
      "+++ b/../escaped.txt",
      "@@ -0,0 +1 @@",
      "+x",
      "",
    ].join("\n");
    const result = await applyPatch(fixture, patch);
    expect(result.ok).toBe(false);
    await expect(stat(join(base, "escaped.txt"))).rejects.toThrow();
  });
});

describe("replaceTrialRoot", () => {
  it("replaces every spelling, longest first", () => {
    const text = "/private/tmp/x/trial/a and /tmp/x/trial/b and /tmp/x/trialother";
    expect(replaceTrialRoot(text, ["/tmp/x/trial", "/private/tmp/x/trial"])).toBe(
      "<trial-root>/a and <trial-root>/b and <trial-root>other",
    );
    expect(replaceTrialRoot("C:\\t\\r and C:/t/r", "C:\\t\\r")).toBe(
      "<trial-root> and <trial-root>",
    );
  });
});

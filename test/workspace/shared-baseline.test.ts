// The run's shared baseline: a trial made from it is the trial a copy of its own would be (same
// commit, same checks, same patches), its repository links the baseline's packs instead of
// writing objects, and nothing a trial can do, in the sandbox or through the scripted tools,
// reaches another trial or the baseline. Code outside the sandbox that writes the shared packs is
// caught before any capture is trusted. Real files, real git, real bubblewrap.
import { createHash } from "node:crypto";
import {
  appendFile,
  chmod,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  symlink,
  unlink,
  utimes,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ScriptedExecutor } from "../../src/exec/index.js";
import { createToolPolicy } from "../../src/policy/index.js";
import { minimalEnv, runCommand } from "../../src/shared/index.js";
import {
  type BaselineArea,
  createBaselineArea,
  createTrialWorkspace,
  type SharedBaseline,
  snapshotTree,
  type TreeSnapshot,
  type TrialWorkspace,
  WorkspaceError,
} from "../../src/workspace/index.js";
import { testSandbox } from "../support/sandbox.js";

const sandbox = await testSandbox();

let base: string;
let fixture: string;
let temps: string;
let frozen: TreeSnapshot;
let area: BaselineArea;
let baseline: SharedBaseline;
const open: TrialWorkspace[] = [];

async function writeTree(dir: string, files: Record<string, string | Buffer>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(dir, path, ".."), { recursive: true });
    await writeFile(join(dir, path), content);
  }
}

async function sharedTrial(): Promise<TrialWorkspace> {
  const workspace = await createTrialWorkspace(fixture, {
    tempParent: temps,
    expectedFixture: frozen,
    baseline,
  });
  open.push(workspace);
  return workspace;
}

async function privateTrial(): Promise<TrialWorkspace> {
  const workspace = await createTrialWorkspace(fixture, {
    tempParent: temps,
    expectedFixture: frozen,
  });
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

/** Every file under `dir` with its inode, mtime, mode and content hash: what "untouched" means. */
async function fileStates(dir: string): Promise<Record<string, string>> {
  const states: Record<string, string> = {};
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    const info = await stat(path, { bigint: true });
    const sha = createHash("sha256")
      .update(await readFile(path))
      .digest("hex");
    states[relative(dir, path)] = `${info.ino} ${info.mtimeNs} ${info.mode.toString(8)} ${sha}`;
  }
  return states;
}

/** The same change made in any trial: an edit, a new file, a deletion, a mode change, binary bytes. */
async function change(root: string): Promise<void> {
  await writeFile(join(root, "src/index.js"), "export const add = (a, b) => a + b;\n");
  await writeTree(root, {
    "src/new.js": "new\n",
    "assets/logo.bin": Buffer.from([0, 1, 2, 255]),
    "cache/new.txt": "ignored by .gitignore, part of the change\n",
  });
  await unlink(join(root, "docs/old.md"));
  await chmod(join(root, "test/index.test.js"), 0o755);
}

async function packNames(root: string): Promise<string[]> {
  return (await readdir(join(root, ".git", "objects", "pack"))).sort();
}

beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), "hl-shared-"));
  fixture = join(base, "fixture");
  temps = join(base, "temps");
  await mkdir(temps);
  await writeTree(fixture, {
    "package.json": '{"name":"demo","scripts":{"test":"node --test"}}\n',
    "src/index.js": "export const add = (a, b) => a - b;\n",
    "test/index.test.js": "// tests\n",
    "docs/old.md": "old\n",
    "tiny.txt": "x",
    "empty.txt": "",
    ".gitignore": "cache/\n",
    "cache/kept.txt": "ignored by git but part of the fixture\n",
  });
  frozen = await snapshotTree(fixture);
  await mkdir(join(base, "areas"));
  area = await createBaselineArea({ tempParent: join(base, "areas") });
  baseline = await area.build(fixture, frozen);
});

afterEach(async () => {
  for (const workspace of open.splice(0)) await workspace.cleanup();
  await area.dispose();
  await rm(base, { recursive: true, force: true });
});

describe("a trial made from the shared baseline", () => {
  it("has the commit, history, clean status and settings a copy of its own gets", async () => {
    const own = await privateTrial();
    const shared = await sharedTrial();
    expect(shared.baselineCommit).toBe(own.baselineCommit);
    expect(baseline.commit).toBe(own.baselineCommit);
    const history = ["log", "--format=%H %T %an <%ae> %at %s"];
    expect(await gitOut(shared.root, history)).toBe(await gitOut(own.root, history));
    expect(await gitOut(shared.root, ["status", "--short"])).toBe("");
    expect(await gitOut(shared.root, ["ls-files"])).toBe(await gitOut(own.root, ["ls-files"]));
    // Same settings but the hooks path, which is each trial's own empty directory.
    const settings = async (root: string) =>
      (await gitOut(root, ["config", "--local", "--list"]))
        .split("\n")
        .filter((line) => !line.startsWith("core.hookspath="));
    expect(await settings(shared.root)).toEqual(await settings(own.root));
    expect((await gitOut(shared.root, ["config", "core.hooksPath"])).trim()).not.toBe(
      (await gitOut(own.root, ["config", "core.hooksPath"])).trim(),
    );
    expect(await readFile(join(shared.root, ".git", "info", "attributes"), "utf8")).toBe(
      await readFile(join(own.root, ".git", "info", "attributes"), "utf8"),
    );
  });

  it("captures the same change as byte for byte the same patch", async () => {
    const own = await privateTrial();
    const shared = await sharedTrial();
    await change(own.root);
    await change(shared.root);
    const [mine, theirs] = [await own.capturePatch(), await shared.capturePatch()];
    expect(mine.changedFiles).toEqual([
      "assets/logo.bin",
      "cache/new.txt",
      "docs/old.md",
      "src/index.js",
      "src/new.js",
      "test/index.test.js",
    ]);
    expect(Buffer.from(theirs.patchBytes)).toEqual(Buffer.from(mine.patchBytes));
    expect(theirs.stats).toEqual(mine.stats);
  });

  it("links the baseline's read-only packs and writes no object of its own", async () => {
    const first = await sharedTrial();
    const second = await sharedTrial();
    const names = await packNames(first.root);
    expect(names.some((name) => name.endsWith(".pack"))).toBe(true);
    expect(await packNames(second.root)).toEqual(names);
    for (const name of names) {
      const [a, b] = await Promise.all(
        [first, second].map((w) => stat(join(w.root, ".git", "objects", "pack", name))),
      );
      expect(b!.ino).toBe(a!.ino);
      expect(a!.nlink).toBeGreaterThanOrEqual(3);
      expect(a!.mode & 0o777).toBe(0o444);
    }
    const objects = await readdir(join(first.root, ".git", "objects"));
    expect(objects.sort()).toEqual(["info", "pack"]);
  });

  it.each([
    ["an edited file of the same size", () => writeFile(join(fixture, "docs/old.md"), "new\n")],
    ["a file made executable", () => chmod(join(fixture, "docs/old.md"), 0o755)],
    ["an added file", () => writeFile(join(fixture, "docs/added.md"), "added\n")],
    ["a removed file", () => unlink(join(fixture, "docs/old.md"))],
  ])(
    "is the fixture as frozen even when the fixture has %s since, which a copy of its own refuses",
    async (_what, alter) => {
      await alter();
      await expect(privateTrial()).rejects.toMatchObject({ code: "fixture-changed" });
      const shared = await sharedTrial();
      expect((await snapshotTree(shared.root, { mode: "trial" })).hash).toBe(frozen.hash);
      expect(await gitOut(shared.root, ["status", "--short"])).toBe("");
    },
  );

  it("gives its index the stat data of the copy's files, as git itself reads them", async () => {
    const shared = await sharedTrial();
    // git's own listing of the index: each entry's ctime, mtime, dev, ino, uid, gid and size.
    const listed = await gitOut(shared.root, ["ls-files", "--debug"]);
    const entries = listed.split(/\n(?=\S)/).filter((block) => block.trim() !== "");
    expect(entries).toHaveLength(frozen.files.filter((f) => f.kind === "file").length);
    for (const block of entries) {
      const path = block.split("\n")[0]!;
      const info = await stat(join(shared.root, path), { bigint: true });
      const field = (name: string) => new RegExp(`${name}: *(\\d+)(?::(\\d+))?`).exec(block);
      expect(field("ctime")?.slice(1, 3)).toEqual([
        String(info.ctimeNs / 1_000_000_000n),
        String(info.ctimeNs % 1_000_000_000n),
      ]);
      expect(field("mtime")?.[1]).toBe(String(info.mtimeNs / 1_000_000_000n));
      expect(field("ino")?.[1]).toBe(String(info.ino & 0xffff_ffffn));
      expect(field("uid")?.[1]).toBe(String(info.uid));
      // Git gives an entry size 0 when its file changed in the second the index was written:
      // it then compares that file by content.
      expect(["0", String(info.size)]).toContain(field("size")?.[1]);
    }
    expect(await gitOut(shared.root, ["diff", "--stat"])).toBe("");
  });

  it("captures a file rewritten at the same size with its mtime put back, whenever it was rewritten", async () => {
    const shared = await sharedTrial();
    const path = join(shared.root, "docs/old.md");
    const before = await stat(path);
    await writeFile(path, "new\n");
    await utimes(path, before.atime, before.mtime);
    expect((await stat(path)).size).toBe(before.size);
    expect((await shared.capturePatch({ addsPaths: false })).changedFiles).toEqual(["docs/old.md"]);
  });

  it.each([
    ["edited at the same size", (path: string) => writeFile(path, "new\n")],
    [
      "edited with its times put back",
      async (path: string) => {
        const before = await stat(path);
        await writeFile(path, "new\n");
        await utimes(path, before.atime, before.mtime);
      },
    ],
    ["made executable", (path: string) => chmod(path, 0o755)],
    ["removed", (path: string) => unlink(path)],
    [
      "replaced",
      async (path: string) => {
        await writeFile(`${path}.new`, "old\n");
        await rename(`${path}.new`, path);
      },
    ],
  ])(
    "refuses a copy when the run's own copy of the fixture had a file %s (code outside the sandbox), naming it, and leaves nothing",
    async (_what, alter) => {
      await sharedTrial();
      const copied = join(area.dir, "1", "tree", "docs", "old.md");
      await alter(copied);
      const refused = await createTrialWorkspace(fixture, {
        tempParent: temps,
        expectedFixture: frozen,
        baseline,
      }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(WorkspaceError);
      expect(refused).toMatchObject({
        code: "fixture-changed",
        evidence: { paths: ["docs/old.md"] },
      });
      expect((refused as WorkspaceError).message).toMatch(
        /^the run's copy of the fixture changed during the run \(docs\/old\.md /,
      );
      expect((refused as WorkspaceError).message).not.toContain(area.dir);
      expect(await readdir(temps)).toHaveLength(1);
    },
  );

  it("captures the same patch without asking git to add paths when the tree has no new one", async () => {
    const shared = await sharedTrial();
    // An edit, a deletion, a mode change and a file turned into a link: no path is new.
    await writeFile(join(shared.root, "src/index.js"), "export const add = (a, b) => a + b;\n");
    await unlink(join(shared.root, "docs/old.md"));
    await chmod(join(shared.root, "test/index.test.js"), 0o755);
    await unlink(join(shared.root, "tiny.txt"));
    await symlink("src/index.js", join(shared.root, "tiny.txt"));
    const added = await shared.capturePatch();
    const spared = await shared.capturePatch({ addsPaths: false });
    expect(spared.changedFiles).toEqual([
      "docs/old.md",
      "src/index.js",
      "test/index.test.js",
      "tiny.txt",
    ]);
    expect(Buffer.from(spared.patchBytes)).toEqual(Buffer.from(added.patchBytes));
    // Told wrongly, git leaves a new file out (the grading copy's check then reports it).
    await writeFile(join(shared.root, "src/new.js"), "new\n");
    expect((await shared.capturePatch()).changedFiles).toContain("src/new.js");
    expect((await shared.capturePatch({ addsPaths: false })).changedFiles).not.toContain(
      "src/new.js",
    );
  });

  it("is not built from a fixture that differs from the frozen one, and leaves nothing", async () => {
    await writeFile(join(fixture, "src/index.js"), "changed before the baseline was built\n");
    await expect(area.build(fixture, frozen)).rejects.toMatchObject({ code: "fixture-changed" });
    expect(await readdir(area.dir)).toEqual(["1"]);
  });

  it("keeps working once the area is removed; no more trials are made from it", async () => {
    const made = await sharedTrial();
    await area.dispose();
    await expect(stat(area.dir)).rejects.toThrow();
    await change(made.root);
    expect((await made.capturePatch()).changedFiles).toHaveLength(6);
    await expect(
      createTrialWorkspace(fixture, { tempParent: temps, baseline }),
    ).rejects.toBeInstanceOf(WorkspaceError);
    expect(await readdir(temps)).toHaveLength(1);
  });
});

/**
 * Every way a trial's code might write the shared packs, or reach the baseline, from the trial's
 * working directory. Each line is `<attempt>: ok` or `<attempt>: refused`.
 */
function attackScript(pack: string, areaDir: string): string {
  const p = `.git/objects/pack/${pack}`;
  return `#!/bin/sh
try() { name="$1"; shift; if "$@" >/dev/null 2>&1; then echo "$name: ok"; else echo "$name: refused"; fi; }
try "append to the pack" sh -c 'printf x >> ${p}'
try "make the pack writable" chmod u+w ${p}
try "truncate the pack" truncate -s 0 ${p}
try "touch the pack" touch ${p}
try "hard-link the pack into the trial" ln ${p} stolen.pack
try "write through that link" sh -c 'test -e stolen.pack && printf x >> stolen.pack'
try "replace the pack" sh -c 'cp ${p} copy.pack && mv -f copy.pack ${p}'
try "remove the pack" rm -f ${p}
try "plant alternates" sh -c 'echo /tmp > .git/objects/info/alternates'
try "write a loose object" sh -c 'mkdir -p .git/objects/ab && echo x > .git/objects/ab/cdef'
try "commit" git -c user.name=a -c user.email=a@a commit --allow-empty -qm x
try "repack" git repack -a -d -q
try "gc" git gc --prune=now -q
try "see the baseline's area" ls ${areaDir}
try "write the run's copy of the fixture" sh -c 'printf x >> ${areaDir}/1/tree/src/index.js'
try "hard-link a file of that copy into the trial" ln ${areaDir}/1/tree/src/index.js stolen.js
ln -s ${p} link.pack
rm -f copy.pack
`;
}

function attempts(output: string): Record<string, string> {
  return Object.fromEntries(
    output
      .split("\n")
      .filter((line) => /: (ok|refused)$/.test(line))
      .map((line) => [
        line.slice(0, line.lastIndexOf(": ")),
        line.slice(line.lastIndexOf(": ") + 2),
      ]),
  );
}

describe("a trial attacking the shared baseline", () => {
  it("from its sandbox, as a validation command or grader would: every write is refused and no other trial notices", async () => {
    const victim = await sharedTrial();
    const attacker = await sharedTrial();
    const before = await fileStates(area.dir);
    const [pack] = (await packNames(attacker.root)).filter((name) => name.endsWith(".pack"));
    await writeFile(join(attacker.root, "attack.sh"), attackScript(pack!, area.dir));
    // The options every caller gives the sandbox for a trial: the trial writable, its .git not.
    const result = await sandbox.run(["sh", "attack.sh"], {
      cwd: attacker.root,
      writable: [attacker.root],
      protect: [join(attacker.root, ".git")],
      timeoutMs: 60_000,
      privateDir: attacker.scratchDir,
    });
    expect(result.exitCode, result.stderr).toBe(0);
    const report = attempts(result.stdout);
    expect(Object.keys(report)).toHaveLength(16);
    expect(Object.entries(report).filter(([, outcome]) => outcome === "ok")).toEqual([]);

    // The packs and the run's copy of the fixture, every file's inode, mtime, mode and bytes.
    expect(Object.keys(before)).toContain(join("1", "tree", "src", "index.js"));
    expect(await fileStates(area.dir)).toEqual(before);
    // Copies are still made from it: its files kept the stat data they were checked with.
    expect((await snapshotTree((await sharedTrial()).root, { mode: "trial" })).hash).toBe(
      frozen.hash,
    );
    await change(victim.root);
    const own = await privateTrial();
    await change(own.root);
    expect(Buffer.from((await victim.capturePatch()).patchBytes)).toEqual(
      Buffer.from((await own.capturePatch()).patchBytes),
    );
    // The attacker's own repository still works, and its patch is its working tree's.
    expect((await attacker.capturePatch()).changedFiles).toEqual(["attack.sh", "link.pack"]);
  });

  it("through the scripted tools: writes into .git are denied, and a link into it is no way around", async () => {
    const victim = await sharedTrial();
    const attacker = await sharedTrial();
    const before = await fileStates(area.dir);
    const [pack] = (await packNames(attacker.root)).filter((name) => name.endsWith(".pack"));
    const agent = join(base, "attacker.mjs");
    await writeFile(
      agent,
      `export default async function attacker({ tools }) {
  const results = {};
  results.script = await tools.write("attack.sh", ${JSON.stringify(attackScript(pack!, area.dir))});
  results.pack = await tools.write(".git/objects/pack/${pack}", "x");
  results.alternates = await tools.write(".git/objects/info/alternates", "/tmp\\n");
  results.edit = await tools.edit(".git/config", "[core]", "[core]\\n\\tfsmonitor = /bin/true");
  results.bash = await tools.bash("sh attack.sh");
  results.link = await tools.write("link.pack", "x");
  return JSON.stringify(results);
}
`,
    );
    const policy = createToolPolicy({
      trialRoot: attacker.root,
      allowedWrites: ["attack.sh", "link.pack"],
      allowedCommands: [["sh", "attack.sh"]],
      tools: ["Read", "Write", "Edit", "Bash"],
    });
    const receipt = await new ScriptedExecutor().run({
      prompt: "attack",
      preamble: "",
      cwd: attacker.root,
      policy,
      timeoutMs: 60_000,
      scratchDir: attacker.scratchDir,
      sandbox,
      runtime: { tools: ["Read", "Write", "Edit", "Bash"], allowedTools: [], disallowedTools: [] },
      agent,
      trialIndex: 1,
      variant: "attacker",
      task: "attack",
    });
    expect(receipt.status, receipt.error ?? "").toBe("completed");
    const results = JSON.parse(receipt.finalText) as Record<
      string,
      { ok: boolean; rule?: string; stdout?: string }
    >;
    expect(results.script?.ok).toBe(true);
    for (const name of ["pack", "alternates", "edit", "link"])
      expect(results[name], name).toMatchObject({ ok: false, rule: "git-dir" });
    expect(results.bash?.ok).toBe(true);
    const report = attempts(results.bash?.stdout ?? "");
    expect(Object.keys(report)).toHaveLength(16);
    expect(Object.entries(report).filter(([, outcome]) => outcome === "ok")).toEqual([]);

    // The packs and the run's copy of the fixture, every file's inode, mtime, mode and bytes.
    expect(Object.keys(before)).toContain(join("1", "tree", "src", "index.js"));
    expect(await fileStates(area.dir)).toEqual(before);
    // Copies are still made from it: its files kept the stat data they were checked with.
    expect((await snapshotTree((await sharedTrial()).root, { mode: "trial" })).hash).toBe(
      frozen.hash,
    );
    await change(victim.root);
    expect((await victim.capturePatch()).changedFiles).toHaveLength(6);
  });
});

describe("code outside the sandbox (the experimenter's scripted agent, or no sandbox at all)", () => {
  it("that writes the shared packs through its links makes every capture and new trial refuse the baseline", async () => {
    const writer = await sharedTrial();
    const other = await sharedTrial();
    const [pack] = (await packNames(writer.root)).filter((name) => name.endsWith(".pack"));
    const link = join(writer.root, ".git", "objects", "pack", pack!);
    await chmod(link, 0o644);
    await appendFile(link, "x");
    for (const workspace of [writer, other])
      await expect(workspace.capturePatch()).rejects.toMatchObject({
        code: "fixture-changed",
        causedByTrial: false,
        evidence: { file: pack, change: "written" },
      });
    await expect(
      createTrialWorkspace(fixture, { tempParent: temps, baseline }),
    ).rejects.toMatchObject({ code: "fixture-changed" });
    expect(await readdir(temps)).toHaveLength(2);
  });

  it("that replaces the packs in its own objects directory changes nothing of the others'", async () => {
    const replacer = await sharedTrial();
    const other = await sharedTrial();
    const before = await fileStates(area.dir);
    for (const name of await packNames(replacer.root)) {
      const path = join(replacer.root, ".git", "objects", "pack", name);
      const bytes = await readFile(path);
      bytes[bytes.length - 30] = (bytes[bytes.length - 30]! + 1) % 256;
      await unlink(path);
      await writeFile(path, bytes);
    }
    expect(await fileStates(area.dir)).toEqual(before);
    await change(other.root);
    const own = await privateTrial();
    await change(own.root);
    expect(Buffer.from((await other.capturePatch()).patchBytes)).toEqual(
      Buffer.from((await own.capturePatch()).patchBytes),
    );
  });

  it("that runs git in its trial (a commit touches the packs it already holds) leaves the baseline usable", async () => {
    const committer = await sharedTrial();
    await writeFile(join(committer.root, "docs/old.md"), "committed\n");
    await gitOut(committer.root, ["commit", "--quiet", "--all", "--message", "agent's commit"]);
    const captured = await committer.capturePatch();
    expect(captured.changedFiles).toEqual(["docs/old.md"]);
    const later = await sharedTrial();
    expect(await gitOut(later.root, ["status", "--short"])).toBe("");
  });
});

// The grading path's copies: the graders that read no file (scope, forge state, read facts) are
// graded on the first copy without a copy of their own; every grader that reads or runs the copy
// starts from the fixture with the patch, and nothing an earlier grader did: the copy is put back
// by its stat data when the sandbox lets no command change a file unseen and the grader only
// added files, and is made anew otherwise. Grades keep the task's order.
import { createHash } from "node:crypto";
import {
  cp,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  rm,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TaskSpec } from "../../src/compare/index.js";
import { type GradePatchInput, gradePatch } from "../../src/compare/trial/grade-patch.js";
import type { PreparedGrader } from "../../src/compare/trial/graders.js";
import { createCommandGrader, type Grade, type GradeContext } from "../../src/graders/index.js";
import {
  type BaselineArea,
  cheapToHash,
  createBaselineArea,
  createTrialWorkspace,
  type SharedBaseline,
  snapshotTree,
  type TreeSnapshot,
} from "../../src/workspace/index.js";
import { assertBaselineIntact } from "../../src/workspace/shared-baseline.js";
import { testSandbox } from "../support/sandbox.js";

let dir: string;
let fixture: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "hl-grade-patch-"));
  fixture = join(dir, "fixture");
  await mkdir(fixture);
  await writeFile(join(fixture, "a.txt"), "one\n");
  await mkdir(join(fixture, "lib", "deep"), { recursive: true });
  await writeFile(join(fixture, "lib", "b.txt"), "bee\n");
  await writeFile(join(fixture, "lib", "deep", "c.txt"), "sea\n");
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** A grader that notes the copy it was given and what it found there, and then writes into it. */
function noting(
  id: string,
  usesCopy: boolean,
  seen: Array<{ id: string; root: string; found: string }>,
): PreparedGrader {
  return {
    id,
    kind: usesCopy ? "command" : "scope",
    usesCopy,
    contractHash: null,
    grader: {
      id,
      grade: async (context: GradeContext): Promise<Grade> => {
        const found = await readFile(join(context.trialRoot, "a.txt"), "utf8");
        seen.push({ id, root: context.trialRoot, found });
        // What the trial's code could do when a grader runs it.
        if (usesCopy) await writeFile(join(context.trialRoot, "a.txt"), `written by ${id}\n`);
        return { grader: id, checks: [], score: 100, passed: true };
      },
    },
  };
}

describe("gradePatch", () => {
  it("grades the file-less graders on the first copy and gives every other grader a fresh one, in the task's order", async () => {
    const seen: Array<{ id: string; root: string; found: string }> = [];
    const created: string[] = [];
    const graders = [
      noting("tests-1", true, seen),
      noting("scope", false, seen),
      noting("tests-2", true, seen),
    ];
    const task = { id: "t", fixtureDir: fixture, expectedFiles: [] } as unknown as TaskSpec;
    const graded = await gradePatch({
      task,
      graders,
      fixtureSnapshot: await snapshotTree(fixture),
      patch: new Uint8Array(),
      changedFiles: [],
      finalText: "",
      sandbox: await testSandbox(),
      tempParent: dir,
      beforeCreate: async (tempDir) => {
        created.push(tempDir);
      },
    });
    expect(graded.harnessFailure).toBeUndefined();
    expect(graded.grades.map((g) => g.grader)).toEqual(["tests-1", "scope", "tests-2"]);
    // The scope grader first, on the copy tests-1 then gets as it was; tests-2 on a fresh copy.
    expect(seen.map((s) => s.id)).toEqual(["scope", "tests-1", "tests-2"]);
    expect(seen[0]!.root).toBe(seen[1]!.root);
    expect(seen[2]!.root).not.toBe(seen[1]!.root);
    expect(seen.map((s) => s.found)).toEqual(["one\n", "one\n", "one\n"]);
    expect(created).toHaveLength(2);
  });
});

/** Every entry under `root` but its `.git`: kind, mode, and content or link text. */
async function listing(root: string, dir = ""): Promise<string[]> {
  const lines: string[] = [];
  for (const name of (await readdir(join(root, dir))).sort()) {
    const path = dir === "" ? name : `${dir}/${name}`;
    if (path === ".git") continue;
    const info = await lstat(join(root, path));
    const mode = (info.mode & 0o7777).toString(8);
    if (info.isDirectory()) lines.push(`dir ${path} ${mode}`, ...(await listing(root, path)));
    else if (info.isSymbolicLink()) lines.push(`link ${path} ${await readlink(join(root, path))}`);
    else {
      const content = await readFile(join(root, path));
      const shown =
        content.length > 4096
          ? `sha256:${createHash("sha256").update(content).digest("hex")}`
          : content.toString("utf8");
      lines.push(`file ${path} ${mode} ${shown}`);
    }
  }
  return lines;
}

/** A grader that lists the copy it was given (as the next grader would find it). */
function looking(id: string, seen: Array<{ id: string; root: string; tree: string[] }>) {
  return {
    id,
    kind: "command",
    usesCopy: true,
    contractHash: null,
    grader: {
      id,
      grade: async (context: GradeContext): Promise<Grade> => {
        seen.push({ id, root: context.trialRoot, tree: await listing(context.trialRoot) });
        return { grader: id, checks: [], score: 100, passed: true };
      },
    },
  } satisfies PreparedGrader;
}

/** What the trial's code could do in its grading copy when a grader runs it (in the sandbox). */
const ATTACKS: Record<string, string> = {
  "only adds files and directories": `
os.makedirs('.cache/deep', exist_ok=True)
open('.cache/deep/result', 'w').write('x')
open('lib/new.txt', 'w').write('new')
os.symlink('/etc/passwd', 'lib/deep/link')
os.mkfifo('fifo')`,
  "rewrites a file in place at the same size and puts its times back": `
st = os.stat('a.txt')
with open('a.txt', 'r+') as f: f.write('PASSED!\\n')
os.utime('a.txt', ns=(st.st_atime_ns, st.st_mtime_ns))`,
  "moves another file's blocks into a fixture file (EXT4_IOC_MOVE_EXT, which keeps its times)": `
open('evil', 'w').write('EVIL' * 1024)
os.sync()
orig = os.open('evil', os.O_RDWR); donor = os.open('lib/b.txt', os.O_RDWR)
try:
    fcntl.ioctl(orig, 0xC028660F, struct.pack('IIQQQQ', 0, donor, 0, 0, 1, 0)); print('moved')
except OSError as e: print('refused', errno.errorcode[e.errno])
os.close(orig); os.close(donor); os.remove('evil')`,
  "sets a default ACL and an attribute": `
acl = struct.pack('<I', 2) + struct.pack('<HHI', 1, 0o5, 0xffffffff) + struct.pack('<HHI', 4, 0o5, 0xffffffff) + struct.pack('<HHI', 32, 0o5, 0xffffffff)
for path, name, value in [('lib', 'system.posix_acl_default', acl), ('a.txt', 'user.mark', b'1')]:
    try:
        os.setxattr(path, name, value); print('set', name)
    except OSError as e: print('refused', errno.errorcode[e.errno])`,
  "changes a directory's mode": "os.chmod('lib', 0o500)",
  "puts a link where a directory was": `
os.rename('lib', 'lib2')
os.symlink('lib2', 'lib')`,
  "hard-links a fixture file and removes a file": `
os.link('a.txt', 'alias')
os.remove('lib/deep/c.txt')`,
  "writes the run's shared packs and its copy's index": `
pack = '.git/objects/pack'
for name in os.listdir(pack):
    path = os.path.join(pack, name)
    for what, attempt in [('append', lambda: open(path, 'ab').write(b'x')), ('chmod', lambda: os.chmod(path, 0o644)), ('link', lambda: os.link(path, name)), ('remove', lambda: os.remove(path))]:
        try:
            attempt(); print('wrote', what, name)
        except OSError as e: print('refused', what, errno.errorcode[e.errno])
try:
    open('.git/index', 'ab').write(b'x'); print('wrote the index')
except OSError as e: print('refused index', errno.errorcode[e.errno])`,
};

/** The attacks after which the copy is put back in place rather than made anew. */
const PUT_BACK = [
  "only adds files and directories",
  "moves another file's blocks into a fixture file (EXT4_IOC_MOVE_EXT, which keeps its times)",
  "sets a default ACL and an attribute",
  "writes the run's shared packs and its copy's index",
];

/** The fixtures put-back is shown on: one read again whole after the patch, one remembered. */
const FIXTURES: Array<[string, (root: string) => Promise<void>]> = [
  ["a small fixture (read again whole after the patch)", async () => {}],
  [
    "a fixture over 2 MiB (remembered before the patch, read again only where it changed)",
    (root) => writeFile(join(root, "lib", "big.txt"), "big\n".repeat(768 * 1024)),
  ],
];

describe.each(FIXTURES)(
  "gradePatch puts a grading copy of %s back only when nothing recorded changed",
  (name, grow) => {
    let scripts: string;
    let fixtureDir: string;
    let patch: Uint8Array;
    let frozen: TreeSnapshot;
    let area: BaselineArea;
    let baseline: SharedBaseline;
    beforeAll(async () => {
      scripts = await mkdtemp(join(tmpdir(), "hl-grade-patch-scripts-"));
      fixtureDir = join(scripts, "fixture");
      await cp(fixture, fixtureDir, { recursive: true });
      await grow(fixtureDir);
      frozen = await snapshotTree(fixtureDir);
      expect(cheapToHash(frozen)).toBe(name.startsWith("a small"));
      // Every copy's .git links the run's packs, as in a run.
      area = await createBaselineArea({ tempParent: dir });
      baseline = await area.build(fixtureDir, frozen);
      // The trial's change: a.txt rewritten.
      const trial = await createTrialWorkspace(fixtureDir, { expectedFixture: frozen });
      await writeFile(join(trial.root, "a.txt"), "patched\n");
      patch = (await trial.capturePatch()).patchBytes;
      await trial.cleanup();
    });
    afterAll(async () => {
      await area.dispose();
      await rm(scripts, { recursive: true, force: true });
    });

    /** Grades the patch with these graders, noting each copy made; a run's inputs but for `changes`. */
    async function grade(graders: PreparedGrader[], changes: Partial<GradePatchInput> = {}) {
      const created: string[] = [];
      const graded = await gradePatch({
        task: { id: "t", fixtureDir, expectedFiles: [] } as unknown as TaskSpec,
        graders,
        fixtureSnapshot: frozen,
        patch,
        changedFiles: ["a.txt"],
        finalText: "",
        sandbox: await testSandbox(),
        baseline,
        tempParent: dir,
        beforeCreate: async (tempDir) => {
          created.push(tempDir);
        },
        ...changes,
      });
      return { graded, created };
    }

    it.each(Object.entries(ATTACKS))(
      "the next grader sees the fixture with the patch when the previous one %s",
      async (name, attack) => {
        const script = join(scripts, `${Object.keys(ATTACKS).indexOf(name)}.py`);
        await writeFile(script, `import errno, fcntl, os, struct\n${attack}\n`);
        const seen: Array<{ id: string; root: string; tree: string[] }> = [];
        const { graded, created } = await grade([
          looking("before", seen),
          {
            id: "attack",
            kind: "command",
            usesCopy: true,
            contractHash: null,
            grader: createCommandGrader({
              id: "attack",
              argv: ["python3", script],
              timeoutMs: 60_000,
            }),
          },
          looking("after", seen),
        ]);
        expect(graded.harnessFailure).toBeUndefined();
        const attackCheck = graded.grades.find((g) => g.grader === "attack")!.checks[0]!;
        expect(attackCheck.passed, JSON.stringify(attackCheck.evidence)).toBe(true);
        const said = (attackCheck.evidence as { stdoutTail: string }).stdoutTail;
        // The calls that change a file unseen are refused by the sandbox, and so is every write to
        // what the copies share.
        expect(said).not.toMatch(/moved|set |wrote/);
        await assertBaselineIntact(baseline);
        const [before, after] = seen;
        expect(before!.tree).toContain("file a.txt 644 patched\n");
        expect(after!.tree).toEqual(before!.tree);
        // The reading grader changed nothing, so the attack ran on its copy, put back after it
        // when the attack changed nothing the fixture had (only added, or was refused).
        const putBack = PUT_BACK.includes(name);
        expect(created).toHaveLength(putBack ? 1 : 2);
        expect(after!.root === before!.root).toBe(putBack);
      },
    );

    it("puts the copy back for a trial that changed nothing (an empty patch)", async () => {
      const seen: Array<{ id: string; root: string; tree: string[] }> = [];
      const script = join(scripts, "adds.py");
      await writeFile(
        script,
        `import errno, fcntl, os, struct\n${ATTACKS["only adds files and directories"]}\n`,
      );
      const adding: PreparedGrader = {
        id: "adds",
        kind: "command",
        usesCopy: true,
        contractHash: null,
        grader: createCommandGrader({ id: "adds", argv: ["python3", script], timeoutMs: 60_000 }),
      };
      const { graded, created } = await grade(
        [looking("before", seen), adding, looking("after", seen)],
        {
          patch: new Uint8Array(),
          changedFiles: [],
        },
      );
      expect(graded.harnessFailure).toBeUndefined();
      expect(seen[0]!.tree).toContain("file a.txt 644 one\n");
      expect(seen[1]!.tree).toEqual(seen[0]!.tree);
      expect(created).toHaveLength(1);
    });

    it("makes a fresh copy after a grader whose command the sandbox had to stop (its processes may still be going)", async () => {
      const seen: Array<{ id: string; root: string; tree: string[] }> = [];
      const { graded, created } = await grade([
        looking("before", seen),
        {
          id: "slow",
          kind: "command",
          usesCopy: true,
          contractHash: null,
          grader: createCommandGrader({ id: "slow", argv: ["sleep", "30"], timeoutMs: 300 }),
        },
        looking("after", seen),
      ]);
      expect(graded.grades.find((g) => g.grader === "slow")?.passed).toBe(false);
      expect(created).toHaveLength(2);
      expect(seen[1]!.tree).toEqual(seen[0]!.tree);
    });

    it("makes a fresh copy for each grader when the sandbox cannot vouch for stat data", async () => {
      const seen: Array<{ id: string; root: string; tree: string[] }> = [];
      const sandbox = await testSandbox();
      const { graded, created } = await grade([looking("one", seen), looking("two", seen)], {
        sandbox: { ...sandbox, changesShowInStat: false },
      });
      expect(graded.harnessFailure).toBeUndefined();
      expect(created).toHaveLength(2);
      expect(seen[1]!.tree).toEqual(seen[0]!.tree);
    });

    it("checks the patched copy against the trial's tree: a.txt is read again after the patch", async () => {
      // The trial's tree as its snapshot saw it: the fixture with a.txt patched.
      const trialTree = join(scripts, "trial-tree");
      await cp(fixtureDir, trialTree, { recursive: true });
      await writeFile(join(trialTree, "a.txt"), "patched\n");
      const seen: Array<{ id: string; root: string; tree: string[] }> = [];
      const reproduced = await grade([looking("one", seen)], {
        expectedTree: await snapshotTree(trialTree, { mode: "trial" }),
      });
      expect(reproduced.graded.grades.map((g) => [g.grader, g.passed])).toEqual([["one", true]]);
      // A trial whose tree the patch does not give (as if a.txt had kept the fixture's content).
      const differs = await grade([looking("two", seen)], { expectedTree: frozen });
      expect(differs.graded.harnessFailure).toBeUndefined();
      expect(seen.map((s) => s.id)).toEqual(["one"]);
      expect(differs.graded.grades).toMatchObject([
        { grader: "integrity", passed: false, checks: [{ id: "patch-reproduces" }] },
      ]);
      expect(differs.graded.grades[0]!.checks[0]!.detail).toContain("a.txt");
    });
  },
);

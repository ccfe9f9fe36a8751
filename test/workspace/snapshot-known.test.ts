// A grading copy's snapshot after `remember` reads only the files whose stat data changed: it is
// the full snapshot after what a patch does (and more: a change that keeps the size and puts the
// old mtime back right after the files were recorded); an unchanged file is not read again. (A
// trial's own copy is always hashed whole: an agent's code can change bytes without stat data.)
import { chmod, link, mkdir, mkdtemp, rm, stat, unlink, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTrialWorkspace, type TreeSnapshot } from "../../src/workspace/index.js";
import { rememberTree, snapshotTree } from "../../src/workspace/snapshot.js";

let dir: string;
let fixture: string;
let frozen: TreeSnapshot;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "hl-snapshot-known-"));
  fixture = join(dir, "fixture");
  await mkdir(join(fixture, "sub"), { recursive: true });
  await writeFile(join(fixture, "a.txt"), "alpha\n");
  await writeFile(join(fixture, "b.txt"), "bravo\n");
  await writeFile(join(fixture, "sub", "c.txt"), "charlie\n");
  await writeFile(join(fixture, "run.sh"), "#!/bin/sh\n", { mode: 0o755 });
  frozen = await snapshotTree(fixture);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("TrialWorkspace.snapshot after remember", () => {
  it("is the full snapshot after changes that keep sizes and mtimes, links, modes and new files", async () => {
    const workspace = await createTrialWorkspace(fixture, {
      expectedFixture: frozen,
      tempParent: dir,
    });
    try {
      await workspace.remember();
      const root = workspace.root;
      // At once: the same size, the old mtime put back.
      const a = join(root, "a.txt");
      const { atime, mtime } = await stat(a);
      await writeFile(a, "ALPHA\n");
      await utimes(a, atime, mtime);
      await chmod(join(root, "run.sh"), 0o644);
      await unlink(join(root, "sub", "c.txt"));
      await writeFile(join(root, "sub", "c.txt"), "CHARLIE\n");
      await link(join(root, "b.txt"), join(root, "b-again.txt"));
      await writeFile(join(root, "new.txt"), "new\n");
      const quick = await workspace.snapshot();
      expect(quick).toEqual(await snapshotTree(root, { mode: "trial" }));
      expect(quick.files.find((f) => f.path === "a.txt")?.sha256).not.toBe(
        frozen.files.find((f) => f.path === "a.txt")?.sha256,
      );
      expect(quick.files.find((f) => f.path === "run.sh")?.executable).toBe(false);
    } finally {
      await workspace.cleanup();
    }
  });

  it("takes an unchanged file's content from what was recorded instead of reading it", async () => {
    const workspace = await createTrialWorkspace(fixture, {
      expectedFixture: frozen,
      tempParent: dir,
    });
    try {
      // What the harness recorded says b.txt holds other bytes: only a read would contradict it.
      const recorded = {
        ...frozen,
        files: frozen.files.map((f) => (f.path === "b.txt" ? { ...f, sha256: "0".repeat(64) } : f)),
      };
      const known = await rememberTree(workspace.root, recorded, workspace.scratchDir);
      expect(known).toBeDefined();
      const quick = await snapshotTree(workspace.root, { mode: "trial", known: known! });
      expect(quick.files.find((f) => f.path === "b.txt")?.sha256).toBe("0".repeat(64));
      expect(quick.files.find((f) => f.path === "a.txt")?.sha256).toBe(
        frozen.files.find((f) => f.path === "a.txt")?.sha256,
      );
    } finally {
      await workspace.cleanup();
    }
  });
});

// A grading copy's snapshot after `remember` reads only the files whose stat data changed: it is
// the full snapshot after what a patch does (and more: a change that keeps the size and puts the
// old mtime back right after the files were recorded); an unchanged file is not read again. (A
// trial's own copy is always hashed whole: an agent's code can change bytes without stat data.)
// `restore` puts a remembered copy back when only entries were added, and refuses otherwise.
import {
  chmod,
  link,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  rm,
  stat,
  statfs,
  symlink,
  unlink,
  utimes,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTrialWorkspace, type TreeSnapshot } from "../../src/workspace/index.js";
import {
  freshPaths,
  rememberTree,
  restoreKnownTree,
  snapshotTree,
  statKey,
} from "../../src/workspace/snapshot.js";

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
      // Whether the copy's files are still in the clock's tick depends on timing: both cases.
      const settled = { ...known, fresh: new Set<string>() };
      const quick = await snapshotTree(workspace.root, { mode: "trial", known: settled });
      expect(quick.files.find((f) => f.path === "b.txt")?.sha256).toBe("0".repeat(64));
      expect(quick.files.find((f) => f.path === "a.txt")?.sha256).toBe(
        frozen.files.find((f) => f.path === "a.txt")?.sha256,
      );
      // A file recorded within the tick it last changed in is read: a change in the same tick
      // would not show in its stat data.
      const fresh = { ...known, fresh: new Set(["b.txt"]) };
      const read = await snapshotTree(workspace.root, { mode: "trial", known: fresh });
      expect(read.files.find((f) => f.path === "b.txt")?.sha256).toBe(
        frozen.files.find((f) => f.path === "b.txt")?.sha256,
      );
    } finally {
      await workspace.cleanup();
    }
  });
});

describe("which recorded entries are fresh (changed within the file clock's tick)", () => {
  it("is every entry stamped at or after the clock's stamp, and every entry when it is unknown", () => {
    const ctimes = new Map([
      ["before", 999n],
      ["at", 1_000n],
      ["after", 1_003n],
    ]);
    expect([...freshPaths(ctimes, 1_000n)].sort()).toEqual(["after", "at"]);
    expect([...freshPaths(ctimes, undefined)].sort()).toEqual(["after", "at", "before"]);
  });

  it("holds what the file clock's stamp says, once every entry was read", async () => {
    const workspace = await createTrialWorkspace(fixture, {
      expectedFixture: frozen,
      tempParent: dir,
    });
    try {
      const root = workspace.root;
      const asked: Array<[string, bigint]> = [];
      const at = (stamp: bigint | undefined) => async (privateDir: string, dev: bigint) => {
        asked.push([privateDir, dev]);
        return stamp;
      };
      const files = frozen.files.filter((f) => f.kind !== "dir").map((f) => f.path);
      const settled = await rememberTree(root, frozen, workspace.scratchDir, at(2n ** 62n));
      expect([...settled.fresh]).toEqual([]);
      const early = await rememberTree(root, frozen, workspace.scratchDir, at(0n));
      expect([...early.fresh].sort()).toEqual([...files].sort());
      const unknown = await rememberTree(root, frozen, workspace.scratchDir, at(undefined));
      expect([...unknown.fresh].sort()).toEqual([...files].sort());
      // Asked on the tree's own filesystem, in the directory given.
      const { dev } = await lstat(root, { bigint: true });
      expect(asked).toEqual(Array(3).fill([workspace.scratchDir, dev]));
      // The real clock: every entry stamped since a file made after recording is fresh.
      const known = await rememberTree(root, frozen, workspace.scratchDir);
      const later = join(workspace.scratchDir, "later");
      await writeFile(later, "");
      const stamp = (await lstat(later, { bigint: true })).ctimeNs;
      for (const path of files) {
        const ctime = (await lstat(join(root, path), { bigint: true })).ctimeNs;
        if (ctime >= stamp) expect(known.fresh.has(path), path).toBe(true);
      }
      expect(await readdir(workspace.scratchDir)).toEqual(["later"]);
    } finally {
      await workspace.cleanup();
    }
  });

  it("keys a file by its owner and link count too, which a change within the tick keeps ctime for", async () => {
    const info = await lstat(join(fixture, "a.txt"), { bigint: true });
    const key = statKey(info);
    for (const change of [
      { nlink: info.nlink + 1n },
      { uid: info.uid + 1n },
      { gid: info.gid + 1n },
    ])
      expect(statKey({ ...info, ...change } as typeof info)).not.toBe(key);
  });
});

describe("TrialWorkspace.restore", () => {
  /** A remembered copy of the fixture, and the snapshot it must be back to. */
  async function remembered() {
    const workspace = await createTrialWorkspace(fixture, {
      expectedFixture: frozen,
      tempParent: dir,
    });
    await workspace.remember();
    return workspace;
  }

  it("removes only what was added, however deep, and empties the scratch area", async () => {
    const workspace = await remembered();
    try {
      const root = workspace.root;
      await mkdir(join(root, "new", "deeper"), { recursive: true });
      await writeFile(join(root, "new", "deeper", "x"), "x");
      await writeFile(join(root, "sub", "added.txt"), "added");
      await symlink("/etc", join(root, "sub", "etc-link"));
      await writeFile(join(workspace.scratchDir, "left"), "behind");
      expect(await workspace.restore()).toBe(true);
      expect((await snapshotTree(root, { mode: "trial" })).hash).toBe(frozen.hash);
      expect(await readdir(workspace.scratchDir)).toEqual([]);
      // Twice: nothing to remove the second time.
      expect(await workspace.restore()).toBe(true);
    } finally {
      await workspace.cleanup();
    }
  });

  it("refuses, removing nothing, when a recorded file or directory changed in any way", async () => {
    const changes: Array<[string, (root: string) => Promise<void>]> = [
      ["the root's mode", (root) => chmod(root, 0o700)],
      ["a directory's mode", (root) => chmod(join(root, "sub"), 0o700)],
      ["a file's mode", (root) => chmod(join(root, "a.txt"), 0o600)],
      [
        // (By one of the same content too, unless within the tick it was recorded in: then the
        // two cannot be told apart, nor need be.)
        "a file replaced by one of the same size",
        async (root) => {
          await unlink(join(root, "b.txt"));
          await writeFile(join(root, "b.txt"), "BRAVO\n");
        },
      ],
      ["a file removed", (root) => unlink(join(root, "sub", "c.txt"))],
      ["a second name for a file", (root) => link(join(root, "a.txt"), join(root, "alias"))],
    ];
    for (const [what, change] of changes) {
      const workspace = await remembered();
      try {
        await writeFile(join(workspace.root, "added.txt"), "added");
        await change(workspace.root);
        expect(await workspace.restore(), what).toBe(false);
        await expect(stat(join(workspace.root, "added.txt")), what).resolves.toBeDefined();
      } finally {
        await workspace.cleanup();
      }
    }
  });

  it("refuses a tree holding a name that is not UTF-8, which could read as a recorded one", async () => {
    const workspace = await remembered();
    try {
      // `sub/c\xff.txt` lists as `sub/c\uFFFD.txt`: never taken for what was recorded.
      const raw = Buffer.concat([
        Buffer.from(`${join(workspace.root, "sub")}/c`),
        Buffer.from([0xff]),
        Buffer.from(".txt"),
      ]);
      await writeFile(raw, "charlie\n");
      expect(await workspace.restore()).toBe(false);
    } finally {
      await workspace.cleanup();
    }
  });

  it("never puts back a copy on tmpfs, whose shared mappings write without moving ctime", async () => {
    const shm = "/dev/shm";
    const type = await statfs(shm).then(
      (found) => found.type,
      () => undefined,
    );
    if (type !== 0x01021994) {
      console.log(`${shm} is not a tmpfs here: the tmpfs case is not checked`);
      return;
    }
    const workspace = await createTrialWorkspace(fixture, {
      expectedFixture: frozen,
      tempParent: shm,
    });
    try {
      await workspace.remember();
      expect(await workspace.restore()).toBe(false);
    } finally {
      await workspace.cleanup();
    }
  });

  it("reads again what was recorded within its tick, and refuses it when it is not what was recorded", async () => {
    const workspace = await createTrialWorkspace(fixture, {
      expectedFixture: frozen,
      tempParent: dir,
    });
    try {
      const root = workspace.root;
      await symlink("a.txt", join(root, "link"));
      // What the harness recorded says b.txt holds other bytes: only a read tells them apart.
      const recorded = {
        ...frozen,
        files: frozen.files.map((f) => (f.path === "b.txt" ? { ...f, sha256: "0".repeat(64) } : f)),
      };
      const known = await rememberTree(root, recorded, workspace.scratchDir);
      // Stat data alone vouch for entries recorded after their tick.
      expect(await restoreKnownTree(root, { ...known, fresh: new Set() })).toBe(true);
      // Within it, the content is read: a.txt is as recorded, b.txt is not.
      expect(await restoreKnownTree(root, { ...known, fresh: new Set(["a.txt"]) })).toBe(true);
      expect(await restoreKnownTree(root, { ...known, fresh: new Set(["b.txt"]) })).toBe(false);
      // A fresh link the snapshot does not hold is never vouched for; one it holds, by its target.
      expect(await restoreKnownTree(root, { ...known, fresh: new Set(["link"]) })).toBe(false);
      const withLink = await snapshotTree(root, { mode: "trial" });
      const linked = await rememberTree(root, withLink, workspace.scratchDir);
      expect(await restoreKnownTree(root, { ...linked, fresh: new Set(["link"]) })).toBe(true);
      const otherTarget = {
        ...withLink,
        files: withLink.files.map((f) =>
          f.path === "link" ? { ...f, sha256: "0".repeat(64) } : f,
        ),
      };
      const elsewhere = await rememberTree(root, otherTarget, workspace.scratchDir);
      expect(await restoreKnownTree(root, { ...elsewhere, fresh: new Set(["link"]) })).toBe(false);
    } finally {
      await workspace.cleanup();
    }
  });

  it("is false when nothing was remembered", async () => {
    const workspace = await createTrialWorkspace(fixture, {
      expectedFixture: frozen,
      tempParent: dir,
    });
    try {
      expect(await workspace.restore()).toBe(false);
    } finally {
      await workspace.cleanup();
    }
  });
});

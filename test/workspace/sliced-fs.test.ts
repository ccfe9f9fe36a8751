import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeDirs, readFileNow, removeAllNow } from "../../src/workspace/sliced-fs.js";
import { removeTree } from "../../src/workspace/temp.js";
import { walkTree } from "../../src/workspace/walk.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "hl-sliced-fs-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A directory deeper than PATH_MAX (4096): 25 levels of 200 characters, each made from the last. */
function deepTree(root: string): void {
  const name = JSON.stringify("d".repeat(200));
  execFileSync(
    process.execPath,
    [
      "-e",
      `const fs=require("fs");for(let i=0;i<25;i++){fs.mkdirSync(${name});process.chdir(${name});}fs.writeFileSync("f","x");`,
    ],
    { cwd: root },
  );
}

describe("removeAllNow", () => {
  it("removes a tree of files, links and directories without following a link", async () => {
    const outside = join(dir, "outside");
    await mkdir(outside);
    await writeFile(join(outside, "keep.txt"), "kept");
    const tree = join(dir, "tree");
    await mkdir(join(tree, "a", "b", "c"), { recursive: true });
    for (let i = 0; i < 3000; i++) await writeFile(join(tree, "a", `f${i}`), "x");
    await writeFile(join(tree, "a", "b", "c", "deep.txt"), "deep");
    await symlink(outside, join(tree, "a", "to-outside"));
    await symlink(join(outside, "keep.txt"), join(tree, "link-to-file"));

    expect(await removeAllNow(tree)).toBe(true);

    expect(existsSync(tree)).toBe(false);
    expect(await readFile(join(outside, "keep.txt"), "utf8")).toBe("kept");
  });

  it("removes a single file or link, and finds nothing to do where nothing is", async () => {
    await writeFile(join(dir, "file"), "x");
    await symlink(join(dir, "file"), join(dir, "link"));
    expect(await removeAllNow(join(dir, "link"))).toBe(true);
    expect(existsSync(join(dir, "file"))).toBe(true);
    expect(await removeAllNow(join(dir, "file"))).toBe(true);
    expect(existsSync(join(dir, "file"))).toBe(false);
    expect(await removeAllNow(join(dir, "never-was"))).toBe(true);
  });

  it("gives up on a tree deeper than a path can name, which removeTree then finishes", async () => {
    const tree = join(dir, "deep");
    await mkdir(tree);
    deepTree(tree);

    expect(await removeAllNow(tree)).toBe(false);
    expect(existsSync(tree)).toBe(true);

    await removeTree(tree);
    expect(existsSync(tree)).toBe(false);
  });
});

/** How many turns of the event loop `work` let happen before it settled. */
async function turnsDuring(work: () => Promise<unknown>): Promise<number> {
  let turns = 0;
  let done = false;
  const tick = () => {
    if (done) return;
    turns += 1;
    setImmediate(tick);
  };
  setImmediate(tick);
  try {
    await work();
  } finally {
    done = true;
  }
  return turns;
}

describe("main-thread tree calls", () => {
  // Opening an empty directory lists nothing but costs as much as listing many entries.
  async function emptyDirectories(root: string): Promise<void> {
    await mkdir(root);
    for (let i = 0; i < 1000; i++) await mkdir(join(root, `d${i}`));
  }

  it("walkTree lets the event loop turn while it opens a tree of empty directories", async () => {
    const tree = join(dir, "empty-dirs");
    await emptyDirectories(tree);
    let listed = 0;
    const turns = await turnsDuring(async () => {
      listed = (await walkTree(tree, "trial")).length;
    });
    expect(listed).toBe(1000);
    expect(turns).toBeGreaterThanOrEqual(5);
  });

  it("removeAllNow lets the event loop turn while it removes a tree of empty directories", async () => {
    const tree = join(dir, "empty-dirs");
    await emptyDirectories(tree);
    let removed = false;
    const turns = await turnsDuring(async () => {
      removed = await removeAllNow(tree);
    });
    expect(removed).toBe(true);
    expect(turns).toBeGreaterThanOrEqual(5);
  });

  it("makeDirs lets the event loop turn while it makes a thousand directories", async () => {
    const tree = join(dir, "made");
    const paths = [tree, ...Array.from({ length: 1000 }, (_, i) => join(tree, `d${i}`))];
    const turns = await turnsDuring(() => makeDirs(paths));
    expect((await readdir(tree)).length).toBe(1000);
    expect(turns).toBeGreaterThanOrEqual(3);
  });
});

describe("makeDirs", () => {
  it("refuses a directory that is already there, and a link in its place", async () => {
    await mkdir(join(dir, "there"));
    await expect(makeDirs([join(dir, "there")])).rejects.toMatchObject({ code: "EEXIST" });
    const outside = join(dir, "outside");
    await mkdir(outside);
    await symlink(outside, join(dir, "link"));
    // A link in place of a directory it was to make is refused, not followed.
    await expect(makeDirs([join(dir, "link")])).rejects.toMatchObject({ code: "EEXIST" });
    expect(await readdir(outside)).toEqual([]);
  });
});

describe("readFileNow", () => {
  it("reads a small file and one above the main-thread limit whole", async () => {
    const small = Buffer.from("small file\n");
    const large = Buffer.alloc(9 * 1024 * 1024, 7);
    large.write("head", 0);
    large.write("tail", large.length - 4);
    await writeFile(join(dir, "small"), small);
    await writeFile(join(dir, "large"), large);
    expect((await readFileNow(join(dir, "small"))).equals(small)).toBe(true);
    expect((await readFileNow(join(dir, "large"))).equals(large)).toBe(true);
  });

  it("fails on a file that is not there", async () => {
    await expect(readFileNow(join(dir, "missing"))).rejects.toMatchObject({ code: "ENOENT" });
  });
});

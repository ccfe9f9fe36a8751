// Files written whole or not at all: a reader never sees a prefix, and what an interrupted
// write leaves is recognisable by name and removed.
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { removeAtomicLeftovers, writeFileAtomic } from "../../src/shared/index.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "hl-atomic-"));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

describe("writeFileAtomic", () => {
  it("replaces a file's content whole and leaves nothing else beside it", async () => {
    const path = join(dir, "metrics.json");
    await writeFile(path, '{"old": true}\n');
    const big = `${JSON.stringify({ items: Array.from({ length: 20000 }, (_, i) => i) })}\n`;
    await writeFileAtomic(path, big);
    expect(await readFile(path, "utf8")).toBe(big);
    await writeFileAtomic(path, new Uint8Array([1, 2, 3]));
    expect([...(await readFile(path))]).toEqual([1, 2, 3]);
    expect(await readdir(dir)).toEqual(["metrics.json"]);
  });

  it("fails without leaving a temporary file when the target cannot be replaced", async () => {
    // A directory in the way: the rename fails after the temporary file was written.
    const blocked = join(dir, "verdict.json");
    await mkdir(blocked);
    await writeFile(join(blocked, "child"), "");
    await expect(writeFileAtomic(blocked, "{}")).rejects.toThrow();
    expect(await readdir(dir)).toEqual(["verdict.json"]);
    expect(await readdir(blocked)).toEqual(["child"]);
  });
});

describe("removeAtomicLeftovers", () => {
  it("removes only what an interrupted atomic write leaves", async () => {
    const names = [
      ".verdict.json.4242.0123456789ab.partial",
      ".manifest.json.7.abcdefabcdef.partial",
      "verdict.json",
      ".verdict.json.partial",
      "notes.partial",
      ".harnesslab-run.lock",
    ];
    for (const name of names) await writeFile(join(dir, name), "x");
    expect(await removeAtomicLeftovers(dir)).toEqual([
      ".manifest.json.7.abcdefabcdef.partial",
      ".verdict.json.4242.0123456789ab.partial",
    ]);
    expect((await readdir(dir)).sort()).toEqual(
      [".harnesslab-run.lock", ".verdict.json.partial", "notes.partial", "verdict.json"].sort(),
    );
  });

  it("treats a missing directory as empty", async () => {
    expect(await removeAtomicLeftovers(join(dir, "absent"))).toEqual([]);
  });
});

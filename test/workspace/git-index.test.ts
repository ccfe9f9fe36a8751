// The git index the harness writes for a copy: git reads it as its own (same entries, the stat
// data given), trusts a file by them, and reads by content what it must not trust. Real git.
import type { BigIntStats } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { minimalEnv, runCommand } from "../../src/shared/index.js";
import { indexWithStats, readIndexLayout } from "../../src/workspace/git-index.js";

let repo: string;

async function git(...args: string[]): Promise<string> {
  const result = await runCommand(["git", ...args], {
    cwd: repo,
    env: minimalEnv({
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_AUTHOR_NAME: "t",
      GIT_AUTHOR_EMAIL: "t@t",
      GIT_COMMITTER_NAME: "t",
      GIT_COMMITTER_EMAIL: "t@t",
    }),
    timeoutMs: 30_000,
  });
  expect(result.exitCode, result.stderr).toBe(0);
  return result.stdout;
}

/** `git ls-files --debug`'s fields of one entry: ctime and mtime as seconds:nanoseconds. */
async function debugFields(path: string): Promise<Record<string, string>> {
  const listed = await git("ls-files", "--debug", "--", path);
  return Object.fromEntries(
    [...listed.matchAll(/(\w+): *(\d+(?::\d+)?)/g)].map((m) => [m[1]!, m[2]!] as const),
  );
}

const files: Record<string, string> = {
  "a.txt": "alpha\n",
  "dir/b.txt": "bravo\n",
  // Long enough to need more than the minimum padding, and not ASCII.
  "dir/sub/ünïcödé-name-of-some-length.txt": "charlie\n",
  "empty.txt": "",
};

beforeEach(async () => {
  repo = await mkdtemp(join(tmpdir(), "hl-git-index-"));
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(repo, path, ".."), { recursive: true });
    await writeFile(join(repo, path), content);
  }
  await git("init", "-q", ".");
  await git("add", "-A");
  await git("commit", "-qm", "base");
  // An index read from the commit alone, as the shared baseline keeps it: no stat data.
  await git("read-tree", "HEAD");
});

afterEach(async () => {
  await rm(repo, { recursive: true, force: true });
});

const indexPath = () => join(repo, ".git", "index");

async function statsOfRepo(): Promise<Map<string, BigIntStats>> {
  const stats = new Map<string, BigIntStats>();
  for (const path of Object.keys(files))
    stats.set(path, await stat(join(repo, path), { bigint: true }));
  return stats;
}

describe("readIndexLayout", () => {
  it("finds every entry git wrote, in git's order, names as written", async () => {
    const layout = readIndexLayout(await readFile(indexPath()));
    expect(layout.entries.map((e) => e.path)).toEqual(
      (await git("ls-files", "-z")).split("\0").filter((p) => p !== ""),
    );
    expect(layout.entries.map((e) => e.path)).toContain("dir/sub/ünïcödé-name-of-some-length.txt");
  });

  it.each([
    ["no signature", (b: Buffer) => b.write("XXXX", 0, "latin1"), /no DIRC signature/],
    ["format 4", (b: Buffer) => b.writeUInt32BE(4, 4), /format 4, not 2 or 3/],
    ["a flipped byte", (b: Buffer) => b.writeUInt8(b[30]! ^ 1, 30), /checksum does not match/],
  ])("refuses an index with %s, saying why", async (_what, damage, why) => {
    const bytes = await readFile(indexPath());
    damage(bytes);
    expect(() => readIndexLayout(bytes)).toThrow(why);
  });
});

describe("indexWithStats", () => {
  it("writes stat data git reads back as given and trusts: the tree is clean without a refresh", async () => {
    const stats = await statsOfRepo();
    const written = indexWithStats(
      readIndexLayout(await readFile(indexPath())),
      (path) => stats.get(path),
      // A second after every file was written: nothing to smudge.
      (await stat(repo, { bigint: true })).ctimeNs / 1_000_000_000n + 10n,
    );
    await writeFile(indexPath(), written);
    for (const [path, info] of stats) {
      const fields = await debugFields(path);
      expect(fields.ctime).toBe(
        `${info.ctimeNs / 1_000_000_000n}:${info.ctimeNs % 1_000_000_000n}`,
      );
      expect(fields.mtime).toBe(
        `${info.mtimeNs / 1_000_000_000n}:${info.mtimeNs % 1_000_000_000n}`,
      );
      expect(fields.ino).toBe(String(info.ino & 0xffff_ffffn));
      expect(fields.size).toBe(String(info.size));
      expect(fields.uid).toBe(String(info.uid));
    }
    expect(await git("status", "--porcelain")).toBe("");
  });

  it("gives size 0 to an entry whose ctime falls in the index's second while its mtime does not, and git then reads it", async () => {
    const stats = await statsOfRepo();
    const a = stats.get("a.txt")!;
    const second = a.ctimeNs / 1_000_000_000n;
    // As if the file's mode had changed in the index's second, after its bytes were written.
    const moved = { ...a, mtimeNs: a.mtimeNs - 5_000_000_000n } as BigIntStats;
    const written = indexWithStats(
      readIndexLayout(await readFile(indexPath())),
      (path) => (path === "a.txt" ? moved : stats.get(path)),
      second,
    );
    await writeFile(indexPath(), written);
    expect((await debugFields("a.txt")).size).toBe("0");
    expect((await debugFields("dir/b.txt")).size).toBe(String(stats.get("dir/b.txt")!.size));
    // Its recorded mtime no longer matches either: git compares the content and finds it clean.
    expect(await git("diff", "--stat")).toBe("");
    await writeFile(join(repo, "a.txt"), "ALPHA\n");
    expect(await git("diff", "--name-only")).toBe("a.txt\n");
  });

  it("gives every entry size 0 when the index's second is unknown", async () => {
    const stats = await statsOfRepo();
    await writeFile(
      indexPath(),
      indexWithStats(readIndexLayout(await readFile(indexPath())), (p) => stats.get(p), undefined),
    );
    for (const path of Object.keys(files)) expect((await debugFields(path)).size).toBe("0");
    expect(await git("status", "--porcelain")).toBe("");
  });
});

import { createHash } from "node:crypto";
import { type BigIntStats, createReadStream } from "node:fs";
import { lstat, readFile, readlink, rm, stat, writeFile } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { mapLimit } from "./pool.js";
import type { SnapshotOptions, TreeEntry, TreeSnapshot } from "./types.js";
import { WorkspaceError } from "./types.js";
import { walkTree } from "./walk.js";

const HASH_CONCURRENCY = 16;
/** Files above this are hashed as a stream instead of being read whole. */
const STREAM_THRESHOLD = 8 * 1024 * 1024;

async function hashFile(
  path: string,
): Promise<{ bytes: number; sha256: string; executable: boolean }> {
  const info = await stat(path);
  // Git records one mode bit for a file: whether its owner may execute it.
  const executable = (info.mode & 0o100) !== 0;
  if (info.size <= STREAM_THRESHOLD) {
    const content = await readFile(path);
    return {
      bytes: content.length,
      sha256: createHash("sha256").update(content).digest("hex"),
      executable,
    };
  }
  const hash = createHash("sha256");
  let bytes = 0;
  for await (const chunk of createReadStream(path)) {
    bytes += (chunk as Buffer).length;
    hash.update(chunk as Buffer);
  }
  return { bytes, sha256: hash.digest("hex"), executable };
}

/** The recorded entry of a file whose stat data have not changed since, or undefined. */
async function knownEntry(
  path: string,
  absolute: string,
  known: KnownTree,
): Promise<TreeEntry | undefined> {
  const recorded = known.stats.get(path);
  if (recorded === undefined) return undefined;
  const info = await lstat(absolute, { bigint: true });
  if (!info.isFile() || statKey(info) !== recorded) return undefined;
  return known.snapshot.get(path);
}

/**
 * `sha256:` over every entry, each as one JSON line, so no path can be confused with another.
 * The executable bit is left out, so hashes recorded before it was kept still match.
 */
function treeHash(files: readonly TreeEntry[]): string {
  const hash = createHash("sha256");
  for (const f of files) hash.update(`${JSON.stringify([f.kind, f.path, f.bytes, f.sha256])}\n`);
  return `sha256:${hash.digest("hex")}`;
}

/**
 * What the harness knows of a tree it made and verified: each regular file's stat data when it
 * was known to hold the content `snapshot` records for its path.
 */
export interface KnownTree {
  stats: ReadonlyMap<string, string>;
  snapshot: ReadonlyMap<string, TreeEntry>;
}

/**
 * A file's identity on disk. Writing it, truncating it, changing its mode, linking or renaming
 * it moves its ctime to the current time, which no process can set back (only moving the
 * system clock could, which the sandbox forbids); replacing it gives another inode or ctime.
 */
function statKey(info: BigIntStats): string {
  return `${info.dev}:${info.ino}:${info.mode}:${info.size}:${info.mtimeNs}:${info.ctimeNs}`;
}

/** The longest `rememberTree` waits for the file clock to move (it always does within a tick). */
const CLOCK_WAIT_MS = 2_000;

/**
 * Records the stat data of every regular file under `root`, whose content is `snapshot`'s (the
 * caller verified it, and only the harness writes to the tree until the snapshot: stat data do
 * not see every change an adversary can make, e.g. an ext4 or XFS extent swap), then waits until the clock the kernel stamps files with has moved past
 * every recorded ctime: a later change to any of them, however fast, then shows in its stat
 * data. Returns undefined when the clock did not move (every file is then hashed again).
 */
export async function rememberTree(
  root: string,
  snapshot: TreeSnapshot,
  scratchDir: string,
): Promise<KnownTree | undefined> {
  const walked = await walkTree(root, "trial");
  const stats = new Map<string, string>();
  let latest = 0n;
  await mapLimit(walked, HASH_CONCURRENCY, async (entry) => {
    if (entry.kind !== "file") return;
    const info = await lstat(entry.absolute, { bigint: true });
    if (!info.isFile()) return;
    stats.set(entry.path, statKey(info));
    if (info.ctimeNs > latest) latest = info.ctimeNs;
  });
  const probe = `${scratchDir}/.clock-probe`;
  const until = performance.now() + CLOCK_WAIT_MS;
  try {
    for (;;) {
      await writeFile(probe, String(performance.now()));
      if ((await lstat(probe, { bigint: true })).ctimeNs > latest) break;
      if (performance.now() > until) return undefined;
      await sleep(1);
    }
  } finally {
    await rm(probe, { force: true });
  }
  const entries = new Map(
    snapshot.files.filter((f) => f.kind === "file").map((f) => [f.path, f] as const),
  );
  return { stats, snapshot: entries };
}

/** Path, kind, size and SHA-256 of everything under `root`, in a deterministic order. */
export async function snapshotTree(
  root: string,
  options: SnapshotOptions & {
    /** Files whose stat data are still the recorded ones are not read again: their content is known. */
    known?: KnownTree;
  } = {},
): Promise<TreeSnapshot> {
  const mode = options.mode ?? "fixture";
  const walked = await walkTree(
    root,
    mode,
    ...(options.maxEntries === undefined ? [] : [options.maxEntries]),
  );
  const files = await mapLimit(walked, HASH_CONCURRENCY, async (entry): Promise<TreeEntry> => {
    try {
      if (entry.kind === "file") {
        const known =
          options.known && (await knownEntry(entry.path, entry.absolute, options.known));
        if (known) return { ...known };
        return { path: entry.path, kind: "file", ...(await hashFile(entry.absolute)) };
      }
      if (entry.kind === "symlink") {
        const target = await readlink(entry.absolute);
        const sha256 = createHash("sha256").update(target).digest("hex");
        return { path: entry.path, kind: "symlink", bytes: Buffer.byteLength(target), sha256 };
      }
      return { path: entry.path, kind: entry.kind, bytes: 0, sha256: null };
    } catch (error) {
      throw new WorkspaceError(
        "snapshot-failed",
        `cannot read ${entry.path}: ${(error as Error).message}`,
        {
          path: entry.path,
          code: (error as NodeJS.ErrnoException).code,
        },
      );
    }
  });
  return { files, hash: treeHash(files) };
}

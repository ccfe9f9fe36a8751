import { createHash, randomBytes } from "node:crypto";
import {
  type BigIntStats,
  closeSync,
  constants,
  createReadStream,
  fstatSync,
  lstatSync,
  openSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statfsSync,
} from "node:fs";
import { readFile, readlink, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { setImmediate as nextTurn } from "node:timers/promises";
import { mapLimit } from "./pool.js";
import { lstatAll, removeAll } from "./sliced-fs.js";
import type { SnapshotOptions, TreeEntry, TreeSnapshot } from "./types.js";
import { WorkspaceError } from "./types.js";
import { walkTree } from "./walk.js";

const HASH_CONCURRENCY = 16;
/** Files above this are hashed as a stream instead of being read whole. */
const STREAM_THRESHOLD = 8 * 1024 * 1024;
const CHEAP_TO_HASH_ENTRIES = 2_000;
const CHEAP_TO_HASH_BYTES = 2 * 1024 * 1024;

/** A regular file's size and SHA-256, and whether its owner may execute it (git keeps that bit). */
type FileContent = { bytes: number; sha256: string; executable: boolean };

export async function hashFile(path: string): Promise<FileContent> {
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

/**
 * Whether reading a whole tree costs less than what it would spare (a git process, about 5 ms
 * here, or recording the tree's stat data): up to 2,000 entries and 2 MiB.
 */
export function cheapToHash(tree: TreeSnapshot): boolean {
  if (tree.files.length > CHEAP_TO_HASH_ENTRIES) return false;
  let bytes = 0;
  for (const entry of tree.files) bytes += entry.bytes;
  return bytes <= CHEAP_TO_HASH_BYTES;
}

/** The recorded entry of a file whose stat data `info` have not changed since, or undefined. */
function knownEntry(
  path: string,
  info: BigIntStats | undefined,
  known: KnownTree,
): TreeEntry | undefined {
  const recorded = known.stats.get(path);
  if (recorded === undefined || known.fresh.has(path) || info === undefined) return undefined;
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
  /** Each directory's identity and mode (`dirKey`); its times move with every entry made in it. */
  dirs: ReadonlyMap<string, string>;
  /**
   * Entries changed within the file clock's tick in which they were recorded: a change in the
   * same tick would leave their stat data as recorded, so their content is read again.
   */
  fresh: ReadonlySet<string>;
  /** The file clock's stamp read after the stat data, if it could be read on the tree's filesystem. */
  clockNs: bigint | undefined;
}

/**
 * A file's identity on disk. Writing it, truncating it, changing its mode or owner, linking or
 * renaming it moves its ctime to the current time, which no process can set back (only moving
 * the system clock could, which the sandbox forbids); replacing it gives another inode or ctime.
 * Its owner and link count are kept too: within the tick it was recorded in, ctime cannot tell.
 */
export function statKey(info: BigIntStats): string {
  return `${info.dev}:${info.ino}:${info.mode}:${info.uid}:${info.gid}:${info.nlink}:${info.size}:${info.mtimeNs}:${info.ctimeNs}`;
}

function dirKey(info: BigIntStats): string {
  return `${info.dev}:${info.ino}:${info.mode}:${info.uid}:${info.gid}`;
}

/**
 * Filesystems (`statfs` types) on which every change to a file's bytes moves its ctime once the
 * sandbox's seccomp filter is in place, writes through shared mappings included: ext2/3/4, XFS,
 * btrfs. Anywhere else (tmpfs, overlayfs, network filesystems) a copy is never put back.
 */
const WRITES_SHOW_IN_CTIME = new Set([0xef53, 0x58465342, 0x9123683e]);

/**
 * Records the stat data of every entry under `root` (the root included), whose content is
 * `snapshot`'s: the caller verified it, and until the tree is looked at again only the harness
 * or commands that cannot change a file unseen write to it (stat data do not see every change an
 * adversary can make, e.g. an ext4 or XFS extent swap, which the sandbox's seccomp filter
 * refuses). An entry whose ctime is not before the file clock's stamp once all were read is
 * `fresh` (`freshPaths`): a change within that tick would not move it, so it is read again
 * instead of trusted (waiting for the next tick, 4 ms here, costs more than reading the few files
 * a patch just wrote). `privateDir` is a directory of the harness's on the same filesystem, where
 * no command writes; `clock` reads the stamp there (tests give their own).
 */
export async function rememberTree(
  root: string,
  snapshot: TreeSnapshot,
  privateDir: string,
  clock: FileClock = fileClockNow,
): Promise<KnownTree> {
  const walked = await walkTree(root, "trial");
  const entries = new Map<string, BigIntStats>();
  const dirs = new Map<string, BigIntStats>([["", lstatSync(root, { bigint: true })]]);
  const stats = await lstatAll(walked.map((entry) => entry.absolute));
  for (const [i, entry] of walked.entries()) {
    const info = stats[i];
    if (info === undefined)
      throw new WorkspaceError("snapshot-failed", `cannot read ${entry.path}`, {
        path: entry.path,
      });
    // Links too (a patch can add one): `restoreKnownTree` must know them; `snapshotTree` reads
    // only regular files by their stat data.
    (info.isDirectory() ? dirs : entries).set(entry.path, info);
  }
  return knownTree(entries, dirs, contentByPath(snapshot), privateDir, clock);
}

/** The files and links of a snapshot by path, as `knownTree` takes them. */
export function contentByPath(snapshot: TreeSnapshot): ReadonlyMap<string, TreeEntry> {
  return new Map(
    snapshot.files
      .filter((f) => f.kind === "file" || f.kind === "symlink")
      .map((f) => [f.path, f] as const),
  );
}

/** Reads the file clock's stamp in a directory of the harness's; see `fileClockNow`. */
export type FileClock = (privateDir: string, dev: bigint) => Promise<bigint | undefined>;

/**
 * A tree's `KnownTree` from stat data the caller read (`dirs` with the root as ""), once every
 * file and link held what `content` records for its path: the file clock is read in
 * `privateDir` after them, so that entries changed within its last tick are `fresh`.
 */
export async function knownTree(
  entries: ReadonlyMap<string, BigIntStats>,
  dirs: ReadonlyMap<string, BigIntStats>,
  content: ReadonlyMap<string, TreeEntry>,
  privateDir: string,
  clock: FileClock = fileClockNow,
): Promise<KnownTree> {
  const top = dirs.get("");
  if (top === undefined) throw new Error("knownTree: the root's stat data are missing");
  const now = await clock(privateDir, top.dev);
  const ctimes = new Map<string, bigint>();
  const stats = new Map<string, string>();
  for (const [path, info] of entries) {
    stats.set(path, statKey(info));
    ctimes.set(path, info.ctimeNs);
  }
  const dirKeys = new Map<string, string>();
  for (const [path, info] of dirs) dirKeys.set(path, dirKey(info));
  return { stats, snapshot: content, dirs: dirKeys, fresh: freshPaths(ctimes, now), clockNs: now };
}

/**
 * The file clock's stamp now, from a file made (exclusively, in a directory no command can
 * write) after every entry was read; undefined when that file is on another filesystem than the
 * tree, whose clock may step differently.
 */
async function fileClockNow(privateDir: string, dev: bigint): Promise<bigint | undefined> {
  const probe = join(privateDir, `.clock-probe-${randomBytes(6).toString("hex")}`);
  // On the main thread: four calls through the thread pool cost more than the calls themselves.
  const fd = openSync(probe, "wx");
  try {
    const info = fstatSync(fd, { bigint: true });
    return info.dev === dev ? info.ctimeNs : undefined;
  } finally {
    closeSync(fd);
    rmSync(probe, { force: true });
  }
}

/**
 * The entries whose ctime is not before the file clock's stamp `now` (every entry when it is
 * unknown): a change within that tick could leave all their stat data as recorded. On kernels
 * whose stamps are finer where asked for (Linux 6.13 and later), an entry can even be stamped
 * after a coarse `now`, which is why the test is "not before" rather than "equal".
 */
export function freshPaths(
  ctimes: ReadonlyMap<string, bigint>,
  now: bigint | undefined,
): Set<string> {
  return new Set(
    [...ctimes].filter(([, ctime]) => now === undefined || ctime >= now).map(([path]) => path),
  );
}

/** Whether a fresh entry (see `KnownTree.fresh`) still holds its recorded content. */
async function holdsRecorded(
  path: string,
  absolute: string,
  info: BigIntStats,
  known: KnownTree,
): Promise<boolean> {
  const recorded = known.snapshot.get(path);
  if (recorded === undefined) return false;
  if (recorded.kind === "symlink" && info.isSymbolicLink())
    return (
      createHash("sha256")
        .update(await readlink(absolute))
        .digest("hex") === recorded.sha256
    );
  if (recorded.kind !== "file" || !info.isFile()) return false;
  const now = await hashFile(absolute);
  return now.sha256 === recorded.sha256 && now.bytes === recorded.bytes;
}

/**
 * Puts a tree back to the one `rememberTree` recorded, when all that changed is entries added:
 * every recorded file, link and directory still has its recorded stat data (and a fresh file or
 * link its recorded content); what was added is removed and true returned. False (the tree left
 * as it is) when a recorded entry changed, went or was replaced, or anything could not be removed.
 * Only for a tree whose writers could not change a file without its stat data showing it (see
 * `CommandSandbox.changesShowInStat`).
 */
export async function restoreKnownTree(root: string, known: KnownTree): Promise<boolean> {
  const extra: string[] = [];
  const intact = async (): Promise<boolean> => {
    // Where a shared mapping's writes do not move a file's times (tmpfs has no page_mkwrite: a
    // page read first is then written without a fault), stat data prove nothing.
    if (!WRITES_SHOW_IN_CTIME.has(statfsSync(root).type)) return false;
    const walked = await walkTree(root, "trial");
    // Names are decoded from bytes: a name that is not UTF-8 reads as another (U+FFFD), and two
    // names could read as one recorded entry.
    const paths = new Set(walked.map((entry) => entry.path));
    if (paths.size !== walked.length || walked.some((entry) => entry.path.includes("\uFFFD")))
      return false;
    const top = lstatSync(root, { bigint: true });
    if (!top.isDirectory() || dirKey(top) !== known.dirs.get("")) return false;
    const stats = await lstatAll(walked.map((entry) => entry.absolute));
    const added = new Set<string>();
    const fresh: number[] = [];
    let seen = 1;
    for (const [i, entry] of walked.entries()) {
      const file = known.stats.get(entry.path);
      const dir = known.dirs.get(entry.path);
      if (file === undefined && dir === undefined) {
        added.add(entry.path);
        continue;
      }
      seen += 1;
      const info = stats[i];
      if (info === undefined) return false;
      if (file === undefined) {
        if (!info.isDirectory() || dirKey(info) !== dir) return false;
      } else if (statKey(info) !== file) return false;
      else if (known.fresh.has(entry.path)) fresh.push(i);
    }
    if (seen !== known.stats.size + known.dirs.size) return false;
    const held = await mapLimit(fresh, HASH_CONCURRENCY, (i) =>
      holdsRecorded(walked[i]!.path, walked[i]!.absolute, stats[i]!, known),
    );
    if (!held.every(Boolean)) return false;
    // Only the outermost of what was added: removing it removes what it holds.
    const inAdded = (path: string) => {
      for (let cut = path.lastIndexOf("/"); cut > 0; cut = path.lastIndexOf("/", cut - 1))
        if (added.has(path.slice(0, cut))) return true;
      return false;
    };
    for (const entry of walked)
      if (added.has(entry.path) && !inAdded(entry.path)) extra.push(entry.absolute);
    return true;
  };
  try {
    if (!(await intact())) return false;
    // Nothing runs in the tree now, and removing what was added changes no recorded entry (a
    // second name for a recorded file would already have changed its link count).
    for (const path of extra) await removeAll(path);
    return extra.every((path) => lstatSync(path, { throwIfNoEntry: false }) === undefined);
  } catch {
    return false;
  }
}

/** Bytes read between two turns of the event loop while hashing a tree: a few milliseconds. */
const SLICE_BYTES = 4 * 1024 * 1024;
/** What reading a small file costs beside its bytes (open, stat, close), counted as bytes. */
const PER_FILE_BYTES = 16 * 1024;

/**
 * A regular file's content read on the main thread, or undefined when it is too large to read
 * whole. Small files dominate a repository, and reading each through the thread pool costs
 * several times what reading it does (50,000 files of 10 kB: 5 s against 1 to 1.4 s here); the
 * caller reads slices of them between turns of the event loop. Never follows a link or waits on
 * a FIFO put where the file was listed.
 */
function hashSmallFileNow(path: string): FileContent | undefined {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) throw new Error("it is no longer a regular file");
    if (info.size > STREAM_THRESHOLD) return undefined;
    const content = readFileSync(fd);
    return {
      bytes: content.length,
      sha256: createHash("sha256").update(content).digest("hex"),
      executable: (info.mode & 0o100) !== 0,
    };
  } finally {
    closeSync(fd);
  }
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
  const known = options.known;
  const stats = known ? await lstatAll(walked.map((entry) => entry.absolute)) : [];
  const files: TreeEntry[] = [];
  let sliceBytes = 0;
  for (const [i, entry] of walked.entries()) {
    if (sliceBytes >= SLICE_BYTES) {
      await nextTurn();
      sliceBytes = 0;
    }
    try {
      if (entry.kind === "file") {
        const recorded = known && knownEntry(entry.path, stats[i], known);
        if (recorded) {
          files.push({ ...recorded });
          continue;
        }
        const content = hashSmallFileNow(entry.absolute) ?? (await hashFile(entry.absolute));
        sliceBytes += content.bytes + PER_FILE_BYTES;
        files.push({ path: entry.path, kind: "file", ...content });
      } else if (entry.kind === "symlink") {
        const target = readlinkSync(entry.absolute);
        const sha256 = createHash("sha256").update(target).digest("hex");
        sliceBytes += PER_FILE_BYTES;
        files.push({ path: entry.path, kind: "symlink", bytes: Buffer.byteLength(target), sha256 });
      } else files.push({ path: entry.path, kind: entry.kind, bytes: 0, sha256: null });
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
  }
  return { files, hash: treeHash(files) };
}

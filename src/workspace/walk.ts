import { type Dir, type Dirent, opendirSync } from "node:fs";
import { join } from "node:path";
import { turnEvery } from "./sliced-fs.js";
import { FIXTURE_GIT_DIR_REASON, WorkspaceError } from "./types.js";

export interface WalkedEntry {
  /** Relative to the walk root, `/`-separated. */
  path: string;
  absolute: string;
  kind: "file" | "dir" | "symlink" | "other";
}

/**
 * The most entries a trial's tree may hold. Each listed entry costs the harness memory, and a
 * trial can make millions of empty files within its time: past this, the trial has left what no
 * patch should carry, and that is its own failure rather than the harness's crash. Fixtures are
 * held to 200,000 when the manifest is loaded, so a trial has room for 300,000 more.
 */
const MAX_TRIAL_ENTRIES = 500_000;

/**
 * Work done between two turns of the event loop, counted in entries listed (a few milliseconds'
 * worth). Directories are read on the main thread, as `sliced-fs` makes its calls: through the
 * thread pool each read costs several times its own work (listing a trial of the example took
 * 0.56 ms against 0.10 ms).
 */
const LIST_SLICE = 2048;
/** What opening a directory costs, counted in entries: a tree of empty directories is no free ride. */
const OPEN_COST = 16;

function kindOf(entry: Dirent): WalkedEntry["kind"] {
  if (entry.isSymbolicLink()) return "symlink";
  if (entry.isDirectory()) return "dir";
  if (entry.isFile()) return "file";
  return "other";
}

/**
 * Lists a tree without following symlinks, sorted by path. In `fixture` mode anything but plain
 * files and directories is an error naming the path, and so is `.git` at any depth (a fixture's
 * own repository would carry its config and hooks into the trial, and a nested one would hide its
 * files from the baseline commit). In `trial` mode only the root's `.git` (exactly that name) is
 * skipped.
 */
export async function walkTree(
  root: string,
  mode: "fixture" | "trial",
  maxEntries: number = mode === "trial" ? MAX_TRIAL_ENTRIES : Number.POSITIVE_INFINITY,
): Promise<WalkedEntry[]> {
  const entries: WalkedEntry[] = [];
  const rootEntry: WalkedEntry = { path: "", absolute: root, kind: "dir" };
  let listed = 0;
  const tooMany = () =>
    new WorkspaceError(
      "too-many-entries",
      `the tree holds more than ${maxEntries} files, directories and links`,
      { limit: maxEntries },
      { causedByTrial: mode === "trial" },
    );
  /** The entry as listed (undefined: the trial's own repository); throws what `mode` refuses. */
  const admitted = (dir: WalkedEntry, dirent: Dirent): WalkedEntry | undefined => {
    const path = dir.path === "" ? dirent.name : `${dir.path}/${dirent.name}`;
    // The trial's own repository is the harness's; any other `.git` (another case, a deeper
    // one) is something the trial made and is listed like any entry.
    if (mode === "trial" && dir.path === "" && dirent.name === ".git") return undefined;
    if (mode === "fixture" && dirent.name.toLowerCase() === ".git")
      throw new WorkspaceError(
        "fixture-git-dir",
        `fixture contains ${path}; ${FIXTURE_GIT_DIR_REASON}`,
        { path },
      );
    const kind = kindOf(dirent);
    if (mode === "fixture" && kind === "symlink")
      throw new WorkspaceError(
        "fixture-symlink",
        `fixture contains a symbolic link at ${path}; fixtures must not contain symlinks`,
        { path },
      );
    if (mode === "fixture" && kind === "other")
      throw new WorkspaceError(
        "fixture-special-file",
        `fixture contains ${path}, which is neither a file nor a directory`,
        { path },
      );
    return { path, absolute: join(dir.absolute, dirent.name), kind };
  };
  const listFailed = (dir: WalkedEntry, error: unknown) =>
    error instanceof WorkspaceError
      ? error
      : new WorkspaceError(
          "snapshot-failed",
          `cannot list ${dir.path === "" ? root : dir.path}: ${(error as Error).message}`,
          { path: dir.path === "" ? "." : dir.path, code: (error as NodeJS.ErrnoException).code },
        );
  const counted = turnEvery(LIST_SLICE);
  // Breadth first, each level in the order it was found: the sort at the end orders the result.
  for (let level = [rootEntry]; level.length > 0; ) {
    const next: WalkedEntry[] = [];
    for (const dir of level) {
      await counted(OPEN_COST);
      let handle: Dir;
      try {
        handle = opendirSync(dir.absolute, { bufferSize: 256 });
      } catch (error) {
        throw listFailed(dir, error);
      }
      try {
        for (let dirent = handle.readSync(); dirent !== null; dirent = handle.readSync()) {
          // Counted as they are read, so that one directory of millions of entries is given up
          // on before it is held in memory whole.
          listed += 1;
          if (listed > maxEntries) throw tooMany();
          await counted(1);
          const entry = admitted(dir, dirent);
          if (entry === undefined) continue;
          entries.push(entry);
          if (entry.kind === "dir") next.push(entry);
        }
      } catch (error) {
        throw listFailed(dir, error);
      } finally {
        handle.closeSync();
      }
    }
    level = next;
  }
  return entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

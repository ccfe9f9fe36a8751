import type { Dirent } from "node:fs";
import { opendir } from "node:fs/promises";
import { join } from "node:path";
import { mapLimit } from "./pool.js";
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

/** Directories read at once; enough to hide latency without exhausting file descriptors. */
const DIRECTORY_CONCURRENCY = 16;

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
  let level: WalkedEntry[] = [{ path: "", absolute: root, kind: "dir" }];
  // Counted as directories are read, across the ones read at once, so that one directory of
  // millions of entries is given up on before it is held in memory whole.
  let listed = 0;
  const tooMany = () =>
    new WorkspaceError(
      "too-many-entries",
      `the tree holds more than ${maxEntries} files, directories and links`,
      { limit: maxEntries },
      { causedByTrial: mode === "trial" },
    );
  while (level.length > 0) {
    const listings = await mapLimit(level, DIRECTORY_CONCURRENCY, async (dir) => {
      try {
        const listing: Dirent[] = [];
        const handle = await opendir(dir.absolute, { bufferSize: 256 });
        for await (const dirent of handle) {
          listed += 1;
          // Leaving the loop closes the directory.
          if (listed > maxEntries) break;
          listing.push(dirent);
        }
        if (listed > maxEntries) throw tooMany();
        return listing;
      } catch (error) {
        if (error instanceof WorkspaceError) throw error;
        throw new WorkspaceError(
          "snapshot-failed",
          `cannot list ${dir.path === "" ? root : dir.path}: ${(error as Error).message}`,
          { path: dir.path === "" ? "." : dir.path, code: (error as NodeJS.ErrnoException).code },
        );
      }
    });
    const next: WalkedEntry[] = [];
    level.forEach((dir, i) => {
      for (const dirent of listings[i]!) {
        const path = dir.path === "" ? dirent.name : `${dir.path}/${dirent.name}`;
        const entry: WalkedEntry = {
          path,
          absolute: join(dir.absolute, dirent.name),
          kind: kindOf(dirent),
        };
        // The trial's own repository is the harness's; any other `.git` (another case, a
        // deeper one) is something the trial made and is listed like any entry.
        if (mode === "trial" && dir.path === "" && dirent.name === ".git") continue;
        if (dirent.name.toLowerCase() === ".git") {
          if (mode === "fixture") {
            throw new WorkspaceError(
              "fixture-git-dir",
              `fixture contains ${path}; ${FIXTURE_GIT_DIR_REASON}`,
              { path },
            );
          }
        }
        if (mode === "fixture" && entry.kind === "symlink") {
          throw new WorkspaceError(
            "fixture-symlink",
            `fixture contains a symbolic link at ${path}; fixtures must not contain symlinks`,
            { path },
          );
        }
        if (mode === "fixture" && entry.kind === "other") {
          throw new WorkspaceError(
            "fixture-special-file",
            `fixture contains ${path}, which is neither a file nor a directory`,
            { path },
          );
        }
        entries.push(entry);
        if (entry.kind === "dir") next.push(entry);
      }
    });

    level = next;
  }
  return entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

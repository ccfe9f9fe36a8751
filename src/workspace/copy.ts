// Copying a fixture and checking a copy against the fixture as frozen.
import { constants, copyFile, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { treeDifferences } from "./diff.js";
import { mapLimit } from "./pool.js";
import { snapshotTree } from "./snapshot.js";
import type { TreeSnapshot } from "./types.js";
import { WorkspaceError } from "./types.js";
import { type WalkedEntry, walkTree } from "./walk.js";

const COPY_CONCURRENCY = 16;

/**
 * Copies a fixture file by file and returns what it copied. The walk refuses symlinks, special
 * files and `.git` before anything is written, and every file is created exclusively, so a link
 * planted in the destination can never redirect a write.
 */
export async function copyFixture(fixtureDir: string, destination: string): Promise<WalkedEntry[]> {
  const entries = await walkTree(fixtureDir, "fixture");
  try {
    await mkdir(destination, { recursive: true });
    // Sorted order puts every directory before its contents.
    for (const entry of entries) {
      if (entry.kind === "dir") await mkdir(join(destination, entry.path));
    }
    const files = entries.filter((e) => e.kind === "file");
    await mapLimit(files, COPY_CONCURRENCY, (file) =>
      copyFile(file.absolute, join(destination, file.path), constants.COPYFILE_EXCL),
    );
    return entries;
  } catch (error) {
    throw new WorkspaceError(
      "copy-failed",
      `cannot copy the fixture: ${(error as Error).message}`,
      {
        fixture: fixtureDir,
        code: (error as NodeJS.ErrnoException).code,
      },
    );
  }
}

/** Refuses a copy that is not the frozen fixture (it changed since the run froze it). */
export async function checkCopy(root: string, expected: TreeSnapshot): Promise<void> {
  const copied = await snapshotTree(root, { mode: "trial" });
  const differing = treeDifferences(expected, copied);
  if (differing.length > 0)
    throw new WorkspaceError(
      "fixture-changed",
      `the fixture changed since the run froze it (${differing.slice(0, 5).join(", ")}${differing.length > 5 ? `, … ${differing.length} paths` : ""}); no trial may start from or be graded on another fixture`,
      { paths: differing.slice(0, 50) },
    );
}

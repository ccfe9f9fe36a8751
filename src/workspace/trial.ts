import {
  chmod,
  constants,
  copyFile,
  mkdir,
  mkdtemp,
  readdir,
  realpath,
  rm,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { capturePatch, createBaseline } from "./git.js";
import { replaceTrialRoot } from "./paths.js";
import { mapLimit } from "./pool.js";
import type { CreateTrialWorkspaceOptions, TrialWorkspace } from "./types.js";
import { WorkspaceError } from "./types.js";
import { walkTree } from "./walk.js";

const COPY_CONCURRENCY = 16;

/**
 * Copies a fixture file by file. The walk refuses symlinks, special files and `.git` before
 * anything is written, and every file is created exclusively, so a link planted in the
 * destination can never redirect a write.
 */
export async function copyFixture(fixtureDir: string, destination: string): Promise<void> {
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

/** Gives the owner full rights on every directory, so files a run made read-only can be removed. */
async function unlockTree(dir: string): Promise<void> {
  await chmod(dir, 0o700).catch(() => {});
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    if (entry.isDirectory()) await unlockTree(join(dir, entry.name));
  }
}

async function removeTree(dir: string): Promise<void> {
  try {
    await rm(dir, { recursive: true, force: true, maxRetries: 3 });
    return;
  } catch {
    await unlockTree(dir);
  }
  try {
    await rm(dir, { recursive: true, force: true, maxRetries: 3 });
  } catch (error) {
    throw new WorkspaceError(
      "cleanup-failed",
      `cannot remove ${dir}: ${(error as Error).message}`,
      {
        code: (error as NodeJS.ErrnoException).code,
      },
    );
  }
}

/**
 * A fresh copy of the fixture with a git baseline, in its own temporary directory:
 *
 *     <temp>/trial    the working copy (the agent's cwd), a repository with one commit
 *     <temp>/scratch  the executor's isolated home/config, also git's HOME
 *     <temp>/hooks    empty; core.hooksPath points here so no hook ever runs
 *
 * The baseline commit id and the repository's config are kept in memory: `capturePatch` restores
 * the config and diffs against that commit, whatever the trial did to its repository.
 *
 * Throws WorkspaceError (`fixture-*`, `copy-failed`, `git-failed`); nothing is left behind then.
 */
export async function createTrialWorkspace(
  fixtureDir: string,
  options: CreateTrialWorkspaceOptions = {},
): Promise<TrialWorkspace> {
  let tempDir: string;
  try {
    tempDir = await mkdtemp(join(options.tempParent ?? tmpdir(), "harnesslab-trial-"));
  } catch (error) {
    throw new WorkspaceError(
      "copy-failed",
      `cannot create a temporary directory: ${(error as Error).message}`,
      {
        code: (error as NodeJS.ErrnoException).code,
      },
    );
  }
  const root = join(tempDir, "trial");
  const scratchDir = join(tempDir, "scratch");
  const hooksDir = join(tempDir, "hooks");
  try {
    await Promise.all([mkdir(scratchDir), mkdir(hooksDir), copyFixture(fixtureDir, root)]);
    const baseline = await createBaseline(root, scratchDir, hooksDir);
    const [realRoot, realTemp] = await Promise.all([realpath(root), realpath(tempDir)]);
    let removed: Promise<void> | undefined;
    return {
      root,
      realRoot,
      scratchDir,
      baselineCommit: baseline.commit,
      // The temp directory itself, not the scratch dir the executor (and so the agent) writes in.
      capturePatch: (patchOptions = {}) =>
        capturePatch(root, { ...patchOptions, tempDir, baseline }),
      scrubPaths: (text) =>
        replaceTrialRoot(
          replaceTrialRoot(text, [root, realRoot]),
          [tempDir, realTemp],
          "<trial-temp>",
        ),
      cleanup: () => {
        removed ??= removeTree(tempDir);
        return removed;
      },
    };
  } catch (error) {
    await removeTree(tempDir).catch(() => {});
    throw error;
  }
}

import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  access,
  chmod,
  constants,
  copyFile,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  realpath,
  rm,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { promisify } from "node:util";
import { treeDifferences } from "./diff.js";
import { capturePatch, createBaseline } from "./git.js";
import { replaceTrialRoot } from "./paths.js";
import { mapLimit } from "./pool.js";
import { snapshotTree } from "./snapshot.js";
import type { CreateTrialWorkspaceOptions, TreeSnapshot, TrialWorkspace } from "./types.js";
import { WorkspaceError } from "./types.js";
import { walkTree } from "./walk.js";

const execFileAsync = promisify(execFile);

const COPY_CONCURRENCY = 16;

/** Every trial's temporary directory is `<temp parent>/harnesslab-trial-<letters and digits>`. */
export const TRIAL_TEMP_PREFIX = "harnesslab-trial-";
const TRIAL_TEMP_NAME = /^harnesslab-trial-[A-Za-z0-9]+$/;

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
    return;
  } catch {
    // A tree deeper than PATH_MAX (a trial can make one) defeats path-based removal; GNU rm
    // walks it by directory handles.
  }
  try {
    await execFileAsync("rm", ["-rf", "--one-file-system", "--", dir], { timeout: 600_000 });
    await access(dir).then(
      () => {
        throw new Error("it is still there after rm -rf");
      },
      () => {},
    );
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

/** Names the directory, lets the caller record it, then creates it (exclusively, owner only). */
async function reserveTempDir(
  parent: string,
  beforeCreate: (tempDir: string) => Promise<void>,
): Promise<string> {
  for (;;) {
    const tempDir = join(parent, `${TRIAL_TEMP_PREFIX}${randomBytes(6).toString("hex")}`);
    await beforeCreate(tempDir);
    try {
      await mkdir(tempDir, { mode: 0o700 });
      return tempDir;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
  }
}

export type AbandonedTempRemoval = "removed" | "absent" | "refused";

/**
 * Removes the temporary directory of a trial whose process died before cleaning up, named by a
 * record that process left. The record is trusted no further than this: the path must be a
 * real directory (not a link), owned by this user, named like a trial's temporary directory,
 * directly inside `tempParent`; anything else is `refused` and left alone.
 */
export async function removeAbandonedTrialTemp(
  tempDir: string,
  tempParent: string,
): Promise<AbandonedTempRemoval> {
  if (!isAbsolute(tempDir) || resolve(tempDir) !== tempDir) return "refused";
  if (dirname(tempDir) !== resolve(tempParent) || !TRIAL_TEMP_NAME.test(basename(tempDir)))
    return "refused";
  let stats: Awaited<ReturnType<typeof lstat>>;
  try {
    stats = await lstat(tempDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return "absent";
    return "refused";
  }
  if (!stats.isDirectory()) return "refused";
  const uid = process.getuid?.();
  if (uid !== undefined && stats.uid !== uid) return "refused";
  await removeTree(tempDir);
  return "removed";
}

/** Refuses a copy that is not the frozen fixture (it changed since the run froze it). */
async function checkCopy(root: string, expected: TreeSnapshot): Promise<void> {
  const copied = await snapshotTree(root, { mode: "trial" });
  const differing = treeDifferences(expected, copied);
  if (differing.length > 0)
    throw new WorkspaceError(
      "fixture-changed",
      `the fixture changed since the run froze it (${differing.slice(0, 5).join(", ")}${differing.length > 5 ? `, … ${differing.length} paths` : ""}); no trial may start from or be graded on another fixture`,
      { paths: differing.slice(0, 50) },
    );
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
  const parent = options.tempParent ?? tmpdir();
  try {
    tempDir = options.beforeCreate
      ? await reserveTempDir(parent, options.beforeCreate)
      : await mkdtemp(join(parent, TRIAL_TEMP_PREFIX));
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
    if (options.expectedFixture) await checkCopy(root, options.expectedFixture);
    const baseline = await createBaseline(root, scratchDir, hooksDir);
    const [realRoot, realTemp] = await Promise.all([realpath(root), realpath(tempDir)]);
    let removed: Promise<void> | undefined;
    return {
      root,
      realRoot,
      scratchDir,
      baselineCommit: baseline.commit,
      // The temp directory itself, not the scratch dir the executor (and so the agent) writes in.
      capturePatch: () => capturePatch(root, { tempDir, baseline }),
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

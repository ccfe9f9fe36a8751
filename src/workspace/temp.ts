// The harness's temporary directories: made owner-only under a known name, noted by the caller
// before they exist, removed whatever a run did to their permissions, and removed after a dead
// process only when a note names one and it is plainly the harness's.
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { access, chmod, lstat, readdir, rm } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { promisify } from "node:util";
import { removeAllNow } from "./sliced-fs.js";
import { WorkspaceError } from "./types.js";

/** Every trial's temporary directory is `<temp parent>/harnesslab-trial-<letters and digits>`. */
export const TRIAL_TEMP_PREFIX = "harnesslab-trial-";
/** A run's shared baselines live in `<temp parent>/harnesslab-baseline-<letters and digits>`. */
export const BASELINE_TEMP_PREFIX = "harnesslab-baseline-";
const HARNESS_TEMP_NAME = /^harnesslab-(?:trial|baseline)-[A-Za-z0-9]+$/;

const execFileAsync = promisify(execFile);

/**
 * Makes `<parent>/<prefix><random>` (exclusively, owner only). With `beforeCreate`, the path is
 * handed to the caller first, so it can note it where a later run will look: a process killed at
 * any point then leaves no directory nobody knows of. If `beforeCreate` throws, nothing is made.
 */
export async function createTempDir(
  parent: string,
  prefix: string,
  beforeCreate?: (dir: string) => Promise<void>,
): Promise<string> {
  try {
    for (;;) {
      const dir = join(parent, `${prefix}${randomBytes(6).toString("hex")}`);
      await beforeCreate?.(dir);
      try {
        mkdirSync(dir, { mode: 0o700 });
        return dir;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
    }
  } catch (error) {
    throw new WorkspaceError(
      "copy-failed",
      `cannot create a temporary directory: ${(error as Error).message}`,
      { code: (error as NodeJS.ErrnoException).code },
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

/**
 * Removes a directory and everything in it. Only directories are ever made writable again, never
 * files: a file here may be a link to one that other trials share.
 */
export async function removeTree(dir: string): Promise<void> {
  if (await removeAllNow(dir)) return;
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

export type AbandonedTempRemoval = "removed" | "absent" | "refused";

/**
 * Removes the temporary directory (a trial's, or a run's shared baselines) of a process that died
 * before cleaning up, named by a record that process left. The record is trusted no further than
 * this: the path must be a real directory (not a link), owned by this user, named like one of the
 * harness's temporary directories, directly inside `tempParent`; anything else is `refused` and
 * left alone.
 */
export async function removeAbandonedTrialTemp(
  tempDir: string,
  tempParent: string,
): Promise<AbandonedTempRemoval> {
  if (!isAbsolute(tempDir) || resolve(tempDir) !== tempDir) return "refused";
  if (dirname(tempDir) !== resolve(tempParent) || !HARNESS_TEMP_NAME.test(basename(tempDir)))
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

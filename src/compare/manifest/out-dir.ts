// `--out` checks (docs/artifacts.md): the output directory must be empty or absent and must not
// overlap any fixture, so no artifact can land in a fixture and no fixture file can be
// mistaken for an artifact. Reads only.
import { lstat, mkdtemp, readdir, realpath, rmdir, statfs } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { type InputProblem, isPathInside } from "../../shared/index.js";
import type { Experiment } from "../experiment.js";

export interface OutDirOptions {
  /** Accept an existing non-empty directory (for `--resume`, which continues a run there). */
  allowNonEmpty?: boolean;
}

const FIELD = "--out";

/**
 * The real path `path` has or would have: the nearest existing ancestor resolved
 * through its symlinks, plus the part that does not exist yet.
 */
async function realPathOf(path: string): Promise<string> {
  const missing: string[] = [];
  let current = resolve(path);
  for (;;) {
    try {
      return join(await realpath(current), ...missing.reverse());
    } catch {
      const parent = dirname(current);
      if (parent === current) return resolve(path);
      missing.push(basename(current));
      current = parent;
    }
  }
}

/** Whether two directories are one inside the other (or the same), through their links. */
export async function foldersOverlap(a: string, b: string): Promise<boolean> {
  const [realA, realB] = await Promise.all([realPathOf(a), realPathOf(b)]);
  return isPathInside(realA, realB) || isPathInside(realB, realA);
}

/** Kernel pseudo-filesystems: files there are views of the kernel, not results. */
const PSEUDO_ROOTS = ["/proc", "/sys", "/dev"];
/** statfs types of pseudo-filesystems (proc, sysfs, devpts, cgroup, cgroup2, debugfs, tracefs, securityfs). */
const PSEUDO_TYPES = new Set([
  0x9fa0, 0x62656572, 0x1cd1, 0x27e0eb, 0x63677270, 0x64626720, 0x74726163, 0x73636673,
]);
/** Less free space than this is a full disk for a run: its first records could not be written. */
const MIN_FREE_BYTES = 16 * 1024 * 1024;

/** The nearest ancestor of `path` (itself included) that exists. */
async function nearestExisting(path: string): Promise<string> {
  let current = resolve(path);
  for (;;) {
    try {
      await lstat(current);
      return current;
    } catch {
      const parent = dirname(current);
      if (parent === current) return current;
      current = parent;
    }
  }
}

/**
 * Whether a run can write where `--out` would be: not a kernel pseudo-filesystem, writable (a
 * probe directory is made and removed at once), and not full. Problems name the directory.
 */
async function writableProblems(absolute: string, realOut: string): Promise<InputProblem[]> {
  if (PSEUDO_ROOTS.some((root) => isPathInside(root, realOut)))
    return [
      {
        path: FIELD,
        message: `${absolute} is on a kernel pseudo-filesystem (${PSEUDO_ROOTS.find((root) => isPathInside(root, realOut))}); choose a directory on disk`,
      },
    ];
  const existing = await nearestExisting(realOut);
  const fs = await statfs(existing).catch(() => undefined);
  if (fs !== undefined && PSEUDO_TYPES.has(Number(fs.type)))
    return [
      {
        path: FIELD,
        message: `${absolute} is on a kernel pseudo-filesystem; choose a directory on disk`,
      },
    ];
  try {
    await rmdir(await mkdtemp(join(existing, ".harnesslab-write-probe-")));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === "EROFS"
        ? "is on a read-only file system"
        : code === "EACCES" || code === "EPERM"
          ? "is not writable for this user"
          : code === "ENOSPC" || code === "EDQUOT"
            ? "has no space left"
            : `cannot be written (${code ?? String(error)})`;
    return [
      {
        path: FIELD,
        message: `${absolute} ${why} (checked at ${existing}); choose another directory`,
      },
    ];
  }
  if (fs !== undefined && Number(fs.bavail) * Number(fs.bsize) < MIN_FREE_BYTES)
    return [
      {
        path: FIELD,
        message: `${absolute} has no space left (${Math.floor((Number(fs.bavail) * Number(fs.bsize)) / 1024)} KiB free on its file system); free some space or choose another directory`,
      },
    ];
  return [];
}

/** Problems with an output directory for this experiment; empty when it can be used. */
export async function checkOutDir(
  outDir: string,
  experiment: Pick<Experiment, "tasks">,
  options: OutDirOptions = {},
): Promise<InputProblem[]> {
  const problems: InputProblem[] = [];
  const absolute = resolve(outDir);
  let exists = false;
  try {
    const stats = await lstat(absolute);
    exists = true;
    if (stats.isSymbolicLink()) {
      // Follow it: what matters is the directory artifacts would really be written to.
      const target = await lstat(await realpath(absolute)).catch(() => undefined);
      if (target === undefined)
        problems.push({ path: FIELD, message: `${absolute} is a broken symbolic link` });
      else if (!target.isDirectory())
        problems.push({ path: FIELD, message: `${absolute} exists and is not a directory` });
    } else if (!stats.isDirectory()) {
      problems.push({ path: FIELD, message: `${absolute} exists and is not a directory` });
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "ENOENT")
      problems.push({
        path: FIELD,
        message: `${absolute} cannot be inspected (${code ?? String(error)})`,
      });
  }
  if (exists && problems.length === 0 && options.allowNonEmpty !== true) {
    const entries = await readdir(absolute).catch(() => [] as string[]);
    if (entries.length > 0)
      problems.push({
        path: FIELD,
        message: entries.includes("manifest.json")
          ? `${absolute} holds a run already (manifest.json); add --resume to finish that run (with the same manifest), or choose an empty or new directory for a new one`
          : `${absolute} is not empty (${entries.length} entr${entries.length === 1 ? "y" : "ies"}); choose an empty or new directory so earlier results are never mixed in or overwritten`,
      });
  }
  const realOut = await realPathOf(absolute);
  if (problems.length === 0) problems.push(...(await writableProblems(absolute, realOut)));
  problems.push(...(await fixtureOverlaps(absolute, experiment, FIELD, "write results")));
  return problems;
}

/**
 * A directory the run writes in (`--out`, `--cache`) that is inside a fixture or holds one: a
 * problem per fixture, naming `field`.
 */
export async function fixtureOverlaps(
  dir: string,
  experiment: Pick<Experiment, "tasks">,
  field: string,
  purpose: string,
): Promise<InputProblem[]> {
  const absolute = resolve(dir);
  const realOut = await realPathOf(absolute);
  const problems: InputProblem[] = [];
  const reported = new Set<string>();
  for (const task of experiment.tasks) {
    const realFixture = await realPathOf(task.fixtureDir);
    if (reported.has(realFixture)) continue;
    if (isPathInside(realFixture, realOut)) {
      reported.add(realFixture);
      problems.push({
        path: field,
        message: `${absolute} is inside the fixture of ${task.manifestField} (${task.fixtureDir}); ${purpose} outside every fixture, which must never change`,
      });
    } else if (isPathInside(realOut, realFixture)) {
      reported.add(realFixture);
      problems.push({
        path: field,
        message: `${absolute} contains the fixture of ${task.manifestField} (${task.fixtureDir}); choose a directory that does not hold any fixture`,
      });
    }
  }
  return problems;
}

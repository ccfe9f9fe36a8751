// `--out` checks (SPEC §4.3): the output directory must be empty or absent and must not
// overlap any fixture, so no artifact can land in a fixture and no fixture file can be
// mistaken for an artifact. Reads only.
import { lstat, readdir, realpath } from "node:fs/promises";
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
export async function realPathOf(path: string): Promise<string> {
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
        message: `${absolute} is not empty (${entries.length} entr${entries.length === 1 ? "y" : "ies"}); choose an empty or new directory so earlier results are never mixed in or overwritten`,
      });
  }
  const realOut = await realPathOf(absolute);
  const reported = new Set<string>();
  for (const task of experiment.tasks) {
    const realFixture = await realPathOf(task.fixtureDir);
    if (reported.has(realFixture)) continue;
    if (isPathInside(realFixture, realOut)) {
      reported.add(realFixture);
      problems.push({
        path: FIELD,
        message: `${absolute} is inside the fixture of ${task.manifestField} (${task.fixtureDir}); write results outside every fixture, which must never change`,
      });
    } else if (isPathInside(realOut, realFixture)) {
      reported.add(realFixture);
      problems.push({
        path: FIELD,
        message: `${absolute} contains the fixture of ${task.manifestField} (${task.fixtureDir}); choose a directory that does not hold any fixture`,
      });
    }
  }
  return problems;
}

import { lstat, realpath } from "node:fs/promises";
import { resolve } from "node:path";
import { isPathInside } from "../shared/index.js";

export type TrialPath =
  | { ok: true; absolute: string }
  | { ok: false; reason: "escapes-root" | "missing" | "symlink-escapes-root"; message: string };

/**
 * Resolves `relativePath` against the trial root and proves it stays inside, both as
 * written and after following symlinks: the trial is agent-written and untrusted, so a
 * link such as `docs -> /etc` must not make a file outside the trial look present.
 * `realRoot` must already be the root's realpath.
 */
export async function resolveInsideTrial(
  realRoot: string,
  relativePath: string,
): Promise<TrialPath> {
  const absolute = resolve(realRoot, relativePath);
  if (!isPathInside(realRoot, absolute)) {
    return {
      ok: false,
      reason: "escapes-root",
      message: `${relativePath} points outside the repository`,
    };
  }
  try {
    await lstat(absolute);
  } catch {
    return { ok: false, reason: "missing", message: `${relativePath} does not exist` };
  }
  let real: string;
  try {
    real = await realpath(absolute);
  } catch {
    // A dangling symlink: present as a link, but nothing a reader could open.
    return { ok: false, reason: "missing", message: `${relativePath} is a broken symlink` };
  }
  if (!isPathInside(realRoot, real)) {
    return {
      ok: false,
      reason: "symlink-escapes-root",
      message: `${relativePath} resolves (through a symlink) outside the repository`,
    };
  }
  return { ok: true, absolute: real };
}

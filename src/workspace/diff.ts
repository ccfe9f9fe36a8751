import type { SnapshotDiff, TreeSnapshot } from "./types.js";

/**
 * What changed between two snapshots of the same tree. Directories are left out (git does not
 * track them and an empty one changes nothing a grader reads); a file that became a symlink or
 * changed content or size counts as modified.
 */
export function diffSnapshots(before: TreeSnapshot, after: TreeSnapshot): SnapshotDiff {
  const old = new Map(before.files.filter((f) => f.kind !== "dir").map((f) => [f.path, f]));
  const now = new Map(after.files.filter((f) => f.kind !== "dir").map((f) => [f.path, f]));
  const added: string[] = [];
  const modified: string[] = [];
  const deleted: string[] = [];
  for (const [path, entry] of now) {
    const previous = old.get(path);
    if (previous === undefined) added.push(path);
    else if (
      previous.kind !== entry.kind ||
      previous.sha256 !== entry.sha256 ||
      previous.bytes !== entry.bytes
    )
      modified.push(path);
  }
  for (const path of old.keys()) if (!now.has(path)) deleted.push(path);
  const byPath = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return {
    added: added.sort(byPath),
    modified: modified.sort(byPath),
    deleted: deleted.sort(byPath),
  };
}

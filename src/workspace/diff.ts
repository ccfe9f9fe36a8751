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

/** A path in a trial that no patch can carry, and why. */
export interface UnpatchableEntry {
  path: string;
  reason: string;
}

/**
 * What of a trial's final tree a git patch cannot express: special files (a FIFO, a socket, a
 * device), any `.git` other than the harness's own repository (a nested repository hides its
 * files from the patch, and git refuses such paths), and two names that read as one. A trial
 * holding one of these cannot be graded from its patch, and it was the trial's doing.
 */
export function unpatchableEntries(after: TreeSnapshot): UnpatchableEntry[] {
  const found: UnpatchableEntry[] = [];
  const seen = new Set<string>();
  for (const entry of after.files) {
    // Names are read as UTF-8: one that is not reads with U+FFFD and can read as another.
    if (seen.has(entry.path)) {
      found.push({
        path: entry.path,
        reason:
          "names two entries as the harness reads names (one of them is not UTF-8); no patch or check can tell them apart",
      });
      continue;
    }
    seen.add(entry.path);
    const gitSegment = entry.path.split("/").find((segment) => segment.toLowerCase() === ".git");
    if (gitSegment !== undefined) {
      const where = entry.path.slice(0, entry.path.indexOf(gitSegment) + gitSegment.length);
      if (!found.some((f) => f.path === where))
        found.push({
          path: where,
          reason:
            "is a git repository or file of its own; a patch cannot carry it, and it would hide files from the trial's patch",
        });
      continue;
    }
    if (entry.kind === "other")
      found.push({
        path: entry.path,
        reason: "is a FIFO, socket or device file; a patch carries only files, symlinks and modes",
      });
  }
  return found;
}

/**
 * Paths whose file, symlink or executable bit differs between two trees (directories aside: a
 * patch neither creates nor removes an empty one). Empty when `actual` reproduces `expected`.
 */
export function treeDifferences(expected: TreeSnapshot, actual: TreeSnapshot): string[] {
  const want = new Map(expected.files.filter((f) => f.kind !== "dir").map((f) => [f.path, f]));
  const got = new Map(actual.files.filter((f) => f.kind !== "dir").map((f) => [f.path, f]));
  const differing = new Set<string>();
  for (const [path, entry] of want) {
    const other = got.get(path);
    if (
      other === undefined ||
      other.kind !== entry.kind ||
      other.sha256 !== entry.sha256 ||
      other.bytes !== entry.bytes ||
      (other.executable ?? false) !== (entry.executable ?? false)
    )
      differing.add(path);
  }
  for (const path of got.keys()) if (!want.has(path)) differing.add(path);
  return [...differing].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

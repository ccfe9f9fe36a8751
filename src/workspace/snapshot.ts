import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { readFile, readlink, stat } from "node:fs/promises";
import { mapLimit } from "./pool.js";
import type { SnapshotOptions, TreeEntry, TreeSnapshot } from "./types.js";
import { WorkspaceError } from "./types.js";
import { walkTree } from "./walk.js";

const HASH_CONCURRENCY = 16;
/** Files above this are hashed as a stream instead of being read whole. */
const STREAM_THRESHOLD = 8 * 1024 * 1024;

async function hashFile(
  path: string,
): Promise<{ bytes: number; sha256: string; executable: boolean }> {
  const info = await stat(path);
  // Git records one mode bit for a file: whether its owner may execute it.
  const executable = (info.mode & 0o100) !== 0;
  if (info.size <= STREAM_THRESHOLD) {
    const content = await readFile(path);
    return {
      bytes: content.length,
      sha256: createHash("sha256").update(content).digest("hex"),
      executable,
    };
  }
  const hash = createHash("sha256");
  let bytes = 0;
  for await (const chunk of createReadStream(path)) {
    bytes += (chunk as Buffer).length;
    hash.update(chunk as Buffer);
  }
  return { bytes, sha256: hash.digest("hex"), executable };
}

/**
 * `sha256:` over every entry, each as one JSON line, so no path can be confused with another.
 * The executable bit is left out, so hashes recorded before it was kept still match.
 */
function treeHash(files: readonly TreeEntry[]): string {
  const hash = createHash("sha256");
  for (const f of files) hash.update(`${JSON.stringify([f.kind, f.path, f.bytes, f.sha256])}\n`);
  return `sha256:${hash.digest("hex")}`;
}

/** Path, kind, size and SHA-256 of everything under `root`, in a deterministic order. */
export async function snapshotTree(
  root: string,
  options: SnapshotOptions = {},
): Promise<TreeSnapshot> {
  const mode = options.mode ?? "fixture";
  const walked = await walkTree(
    root,
    mode,
    ...(options.maxEntries === undefined ? [] : [options.maxEntries]),
  );
  const files = await mapLimit(walked, HASH_CONCURRENCY, async (entry): Promise<TreeEntry> => {
    try {
      if (entry.kind === "file")
        return { path: entry.path, kind: "file", ...(await hashFile(entry.absolute)) };
      if (entry.kind === "symlink") {
        const target = await readlink(entry.absolute);
        const sha256 = createHash("sha256").update(target).digest("hex");
        return { path: entry.path, kind: "symlink", bytes: Buffer.byteLength(target), sha256 };
      }
      return { path: entry.path, kind: entry.kind, bytes: 0, sha256: null };
    } catch (error) {
      throw new WorkspaceError(
        "snapshot-failed",
        `cannot read ${entry.path}: ${(error as Error).message}`,
        {
          path: entry.path,
          code: (error as NodeJS.ErrnoException).code,
        },
      );
    }
  });
  return { files, hash: treeHash(files) };
}

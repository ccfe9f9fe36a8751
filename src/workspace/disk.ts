// Disk space: what a trial's tree takes, what the file system has left, and a watch that ends a
// trial going over its budget. A trial's writes have no quota of the operating system's (that
// needs root or a file system per trial), so the harness measures them: cheaply and often from
// the file system's own free space, and by walking the trial's tree when that moved.
import { lstat, readdir, statfs } from "node:fs/promises";

const MiB = 1024 * 1024;

/**
 * Bytes a tree takes on disk: the blocks allocated to every entry under `root` (a sparse file
 * counts what it holds, a hard link once), not following links. Entries that vanish while it
 * walks count nothing.
 */
export async function diskUsage(root: string): Promise<number> {
  const seen = new Set<string>();
  let total = 0;
  // Paths as bytes: a name that is not UTF-8 would not survive decoding, and what it holds
  // would go uncounted.
  const visit = async (path: Buffer): Promise<void> => {
    const info = await lstat(path, { bigint: true }).catch(() => undefined);
    if (info === undefined) return;
    if (info.nlink > 1n) {
      const inode = `${info.dev}:${info.ino}`;
      if (seen.has(inode)) return;
      seen.add(inode);
    }
    total += Number(info.blocks) * 512;
    if (!info.isDirectory()) return;
    const names = await readdir(path, { encoding: "buffer" }).catch((): Buffer[] => []);
    for (const name of names) await visit(Buffer.concat([path, SEPARATOR, name]));
  };
  await visit(Buffer.from(root));
  return total;
}

const SEPARATOR = Buffer.from("/");

/** Free bytes for an unprivileged writer on the file system holding `path`. */
export async function freeBytes(path: string): Promise<number> {
  const info = await statfs(path);
  return Number(info.bavail) * Number(info.bsize);
}

/** Bytes in use on the file system holding `path`. */
async function usedBytes(path: string): Promise<number> {
  const info = await statfs(path);
  return (Number(info.blocks) - Number(info.bfree)) * Number(info.bsize);
}

/** Whether an error is the file system being full (or a quota reached), however it surfaced. */
export function isDiskFull(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === "ENOSPC" || code === "EDQUOT") return true;
  const text =
    error instanceof Error
      ? `${error.message} ${JSON.stringify((error as { evidence?: unknown }).evidence ?? "")}`
      : String(error);
  return /\bENOSPC\b|No space left on device|Disk quota exceeded|\bEDQUOT\b/.test(text);
}

interface DiskWatch {
  /** Stops watching; resolves once no measurement is running. */
  stop(): Promise<void>;
}

export interface DiskWatchOptions {
  /** The trees whose use is summed and held to the budget. */
  roots: () => readonly string[];
  budgetBytes: number;
  /** Called once, with the bytes measured, when the trees' use goes over the budget. */
  onExceeded: (bytes: number) => void;
  /** How often the file system's own use is read (default 100 ms). */
  pollMs?: number;
}

/**
 * Watches trees against a budget until stopped. The file system's used bytes are read every
 * `pollMs` (one statfs call); the trees are walked when that grew by a quarter of the budget
 * since the last walk, and at least every few seconds (never more often than ten times the last
 * walk took, so a large tree does not cost a core).
 */
export function watchDiskUse(options: DiskWatchOptions): DiskWatch {
  const pollMs = options.pollMs ?? 100;
  const step = Math.max(MiB, Math.floor(options.budgetBytes / 4));
  let stopped = false;
  let exceeded = false;
  let lastUsed: number | undefined;
  let lastWalk = 0;
  let walkMs = 0;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();

  const walk = async () => {
    const started = performance.now();
    let bytes = 0;
    for (const root of options.roots()) bytes += await diskUsage(root);
    walkMs = performance.now() - started;
    lastWalk = performance.now();
    if (!stopped && !exceeded && bytes > options.budgetBytes) {
      exceeded = true;
      options.onExceeded(bytes);
    }
  };
  const tick = async () => {
    const roots = options.roots();
    if (roots.length === 0) return;
    const used = await usedBytes(roots[0] as string).catch(() => undefined);
    const grew = used !== undefined && lastUsed !== undefined && used - lastUsed >= step;
    const due = performance.now() - lastWalk >= Math.max(3_000, walkMs * 10);
    if (grew || due || lastUsed === undefined) {
      lastUsed = used;
      await walk();
    }
  };
  const schedule = () => {
    if (stopped || exceeded) return;
    timer = setTimeout(() => {
      running = tick()
        .catch(() => {})
        .finally(schedule);
    }, pollMs);
    timer.unref?.();
  };
  schedule();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}

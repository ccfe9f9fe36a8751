// Opening a file the agent may have prepared: only a regular file is ever read or written, and
// nothing is opened in a way that can block (a FIFO with no writer would hang a plain open or
// read forever) or follow a last-moment symlink.
import { constants } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";

// Windows has neither flag; there the policy's checks alone stand.
const NO_FOLLOW = constants.O_NOFOLLOW ?? 0;
const NON_BLOCKING = constants.O_NONBLOCK ?? 0;

export type RegularFileResult<T> = { ok: true; value: T } | { ok: false; error: string };

function openError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "ENOENT") return "no such file";
  if (code === "ELOOP") return "is a symbolic link";
  if (code === "EISDIR") return "is a directory";
  if (code === "ENXIO") return "is not a regular file (a FIFO or socket)";
  if (code === "ENOTDIR") return "a parent is not a directory";
  return code ?? (error instanceof Error ? error.message : String(error));
}

async function withRegularFile<T>(
  path: string,
  flags: number,
  use: (handle: FileHandle, size: number) => Promise<RegularFileResult<T>>,
): Promise<RegularFileResult<T>> {
  let handle: FileHandle;
  try {
    handle = await open(path, flags | NO_FOLLOW | NON_BLOCKING, 0o644);
  } catch (error) {
    return { ok: false, error: openError(error) };
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile())
      return {
        ok: false,
        error: stats.isDirectory()
          ? "is a directory"
          : "is not a regular file (a FIFO, socket or device); it is not opened",
      };
    return await use(handle, stats.size);
  } finally {
    await handle.close().catch(() => {});
  }
}

/** Reads a regular file of at most `maxBytes`; anything else is refused without blocking. */
export function readRegularFile(
  path: string,
  maxBytes: number,
): Promise<RegularFileResult<Buffer>> {
  return withRegularFile(path, constants.O_RDONLY, async (handle, size) => {
    if (size > maxBytes) return { ok: false, error: `is larger than ${maxBytes} bytes` };
    // Read at most one byte past the cap: a file that grows meanwhile is still bounded.
    const buffer = Buffer.alloc(Math.min(size, maxBytes) + 1);
    let filled = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
      if (filled === buffer.length) break;
    }
    if (filled > maxBytes) return { ok: false, error: `is larger than ${maxBytes} bytes` };
    return { ok: true, value: buffer.subarray(0, filled) };
  });
}

/**
 * Replaces the content of a regular file (creating it when absent) with `content`, refusing a
 * symlink, FIFO, socket or device at that path and content over `maxBytes`.
 */
export function writeRegularFile(
  path: string,
  content: string | Uint8Array,
  maxBytes: number,
): Promise<RegularFileResult<number>> {
  const bytes = typeof content === "string" ? Buffer.from(content, "utf8") : Buffer.from(content);
  if (bytes.length > maxBytes)
    return Promise.resolve({ ok: false, error: `content is larger than ${maxBytes} bytes` });
  return withRegularFile(path, constants.O_WRONLY | constants.O_CREAT, async (handle) => {
    await handle.truncate(0);
    let written = 0;
    while (written < bytes.length) {
      const { bytesWritten } = await handle.write(bytes, written, bytes.length - written, written);
      written += bytesWritten;
    }
    return { ok: true, value: bytes.length };
  });
}

// Reading a `.harness` component's `source` from the file system (the compiler does no I/O of its
// own): a file or a folder next to the `.harness` file, every file hashed, small text files'
// text kept for the compiler's checks. Nothing outside the `.harness` file's folder is read: no
// symbolic link is followed, and a path that resolves outside is refused.
import { createHash } from "node:crypto";
import { lstatSync, readdirSync, readFileSync, realpathSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const MAX_FILES = 2_000;
const MAX_FILE_BYTES = 16 * 1024 * 1024;
const MAX_TOTAL_BYTES = 64 * 1024 * 1024;
const MAX_TEXT_BYTES = 256 * 1024;

interface FileRead {
  path: string;
  sha256: string;
  text?: string;
}

type SourceReadResult =
  | { ok: true; type: "file" | "directory"; files: FileRead[] }
  | { ok: false; error: string };

/** The folder a `.harness` file's uri names (a path, or a `file:` URL). */
function folderOf(uri: string): string {
  return dirname(uri.startsWith("file:") ? fileURLToPath(uri) : resolve(uri));
}

/** `source` `path`, relative to the `.harness` file at `fromUri`, read as the compiler needs it. */
export function readHarnessSource(fromUri: string, path: string): SourceReadResult {
  const base = folderOf(fromUri);
  const absolute = resolve(base, path);
  let realBase: string;
  let real: string;
  try {
    realBase = realpathSync(base);
    real = realpathSync(absolute);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return {
      ok: false,
      error: code === "ENOENT" ? `no such file or folder (looked for ${absolute})` : `${code}`,
    };
  }
  if (real !== realBase && !real.startsWith(`${realBase}${sep}`))
    return { ok: false, error: `it resolves to ${real}, outside ${realBase} (a symbolic link)` };
  const files: FileRead[] = [];
  let total = 0;
  const add = (file: string, name: string): string | undefined => {
    const info = lstatSync(file);
    if (info.isSymbolicLink()) return `${name} is a symbolic link`;
    if (!info.isFile()) return `${name} is not a regular file`;
    if (info.size > MAX_FILE_BYTES) return `${name} is larger than ${MAX_FILE_BYTES} bytes`;
    total += info.size;
    if (total > MAX_TOTAL_BYTES) return `the source is larger than ${MAX_TOTAL_BYTES} bytes`;
    if (files.length >= MAX_FILES) return `the source has more than ${MAX_FILES} files`;
    const bytes = readFileSync(file);
    const read: FileRead = {
      path: name,
      sha256: `sha256:${createHash("sha256").update(bytes).digest("hex")}`,
    };
    if (bytes.length <= MAX_TEXT_BYTES) {
      const text = bytes.toString("utf8");
      if (Buffer.from(text, "utf8").equals(bytes)) read.text = text;
    }
    files.push(read);
    return undefined;
  };
  const top = lstatSync(real);
  if (top.isFile()) {
    const problem = add(real, path.split("/").pop() ?? path);
    return problem === undefined
      ? { ok: true, type: "file", files }
      : { ok: false, error: problem };
  }
  if (!top.isDirectory()) return { ok: false, error: "it is neither a file nor a folder" };
  const walk = (dir: string): string | undefined => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const child = join(dir, entry.name);
      const name = relative(real, child).split(sep).join("/");
      if (entry.isDirectory()) {
        const problem = walk(child);
        if (problem !== undefined) return problem;
      } else {
        const problem = add(child, name);
        if (problem !== undefined) return problem;
      }
    }
    return undefined;
  };
  const problem = walk(real);
  return problem === undefined
    ? { ok: true, type: "directory", files }
    : { ok: false, error: problem };
}

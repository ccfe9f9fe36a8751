// Writing a file so that a reader (or a resumed run) sees either the old content or the whole
// new content, never a prefix: the bytes go to a temporary sibling, which is then renamed over
// the target. rename(2) within one directory is atomic on POSIX file systems, so a process
// killed at any instant (SIGKILL, OOM) leaves at worst a stray temporary file, which
// `removeAtomicLeftovers` recognises by name. (Power loss is another matter: no fsync here,
// since a run's records are cheap to redo and thousands of fsyncs are not.)
import { randomBytes } from "node:crypto";
import { readdir, rename, rm, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

/** `.<name>.<pid>.<hex>.partial`: hidden, and never a name the harness gives a real artifact. */
const LEFTOVER = /^\..+\.\d+\.[0-9a-f]{12}\.partial$/;

function temporarySibling(path: string): string {
  const suffix = `${process.pid}.${randomBytes(6).toString("hex")}.partial`;
  return join(dirname(path), `.${basename(path)}.${suffix}`);
}

/** Writes `content` to `path` through a temporary file in the same directory and a rename. */
export async function writeFileAtomic(path: string, content: string | Uint8Array): Promise<void> {
  const temporary = temporarySibling(path);
  try {
    await writeFile(temporary, content, { flag: "wx" });
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => {});
    throw error;
  }
}

/** Removes the temporary files an interrupted `writeFileAtomic` left directly in `dir`; returns their names. */
export async function removeAtomicLeftovers(dir: string): Promise<string[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const leftovers = names.filter((name) => LEFTOVER.test(name)).sort();
  await Promise.all(leftovers.map((name) => rm(join(dir, name), { force: true })));
  return leftovers;
}

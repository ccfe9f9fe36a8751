// File-system checks of the paths a manifest names: they exist, have the right kind,
// are not symbolic links, and stay inside the manifest's directory after every symlink
// in their parents is resolved; a fixture holds only what a trial workspace accepts.
// Reads only.
import type { Dirent } from "node:fs";
import { lstat, readdir, realpath } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { type InputProblem, isPathInside } from "../../shared/index.js";
import { FIXTURE_GIT_DIR_REASON } from "../../workspace/index.js";
import { portablePathProblem } from "./paths.js";

export interface PathReference {
  /** JSON path of the field (`task.fixture`, `variants[2].agent`). */
  field: string;
  /** The relative path as written in the manifest. */
  path: string;
  kind: "file" | "directory";
  /** What the path is for, in words (`fixture`, `prompt`). */
  what: string;
  /** For a fixture: also reject symbolic links and special files anywhere inside it. */
  regularContentsOnly?: boolean;
}

/** Symbolic links and special files reported per fixture before "… and N more". */
const MAX_FIXTURE_ENTRIES_REPORTED = 5;

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException).code;
}

async function realDirectory(path: string): Promise<string> {
  try {
    return await realpath(path);
  } catch {
    return resolve(path);
  }
}

/** Problems with one referenced path; empty when it is usable. */
async function referenceProblems(
  manifestDir: string,
  realManifestDir: string,
  reference: PathReference,
): Promise<InputProblem[]> {
  if (portablePathProblem(reference.path) !== undefined) return []; // reported by the schema
  const shown = JSON.stringify(reference.path);
  const absolute = resolve(manifestDir, reference.path);
  const problem = (message: string): InputProblem[] => [{ path: reference.field, message }];
  let stats: Awaited<ReturnType<typeof lstat>>;
  try {
    stats = await lstat(absolute);
  } catch (error) {
    const code = errorCode(error);
    if (code === "ENOENT" || code === "ENOTDIR")
      return problem(
        `${shown} does not exist (the ${reference.what} was looked for at ${absolute})`,
      );
    return problem(`${shown} cannot be read (${code ?? String(error)})`);
  }
  if (stats.isSymbolicLink())
    return problem(
      `${shown} is a symbolic link; the ${reference.what} must be a real ${reference.kind} inside the manifest's directory`,
    );
  if (reference.kind === "directory" && !stats.isDirectory())
    return problem(`${shown} is not a directory; the ${reference.what} must be a directory`);
  if (reference.kind === "file" && stats.isDirectory())
    return problem(`${shown} is a directory; the ${reference.what} must be a file`);
  if (reference.kind === "file" && !stats.isFile())
    return problem(`${shown} is not a regular file; the ${reference.what} must be a file`);
  let real: string;
  try {
    real = await realpath(absolute);
  } catch (error) {
    return problem(`${shown} cannot be resolved (${errorCode(error) ?? String(error)})`);
  }
  if (!isPathInside(realManifestDir, real))
    return problem(
      `${shown} resolves to ${real}, outside the manifest's directory (a parent directory is a symbolic link); keep the ${reference.what} inside ${realManifestDir}`,
    );
  return [];
}

/** Entries a fixture may hold (files and directories, counted together). */
const MAX_FIXTURE_ENTRIES = 200_000;

/** What kind of entry makes a fixture unusable. */
export type FixtureIrregularKind = "symlink" | "special" | "git-metadata";

/**
 * Symbolic links, special files and git metadata (`.git` at any depth, the root one included:
 * the trial workspace refuses it, so validation must too) inside a fixture, as paths relative to
 * it, sorted. A `.git` directory is reported once, not walked.
 */
export async function fixtureIrregularEntries(
  fixtureDir: string,
  limits: { maxEntries?: number } = {},
): Promise<Array<{ path: string; kind: FixtureIrregularKind | "too-many" }>> {
  const found: Array<{ path: string; kind: FixtureIrregularKind | "too-many" }> = [];
  const pending: string[] = [""];
  const maxEntries = limits.maxEntries ?? MAX_FIXTURE_ENTRIES;
  let seen = 0;
  while (pending.length > 0) {
    // A fixture is a repository: a walk that goes on and on is a wrong path (`/`, a home).
    if (seen > maxEntries) {
      found.push({ path: "", kind: "too-many" });
      break;
    }
    const relativeDir = pending.pop()!;
    let entries: Dirent[];
    try {
      entries = await readdir(join(fixtureDir, relativeDir), { withFileTypes: true });
    } catch {
      continue; // an unreadable directory fails the fixture snapshot with its own evidence
    }
    seen += entries.length;
    for (const entry of entries) {
      const path = relativeDir === "" ? entry.name : `${relativeDir}/${entry.name}`;
      // Compared without case, as the workspace does: macOS and Windows treat `.GIT` as `.git`.
      if (entry.name.toLowerCase() === ".git") found.push({ path, kind: "git-metadata" });
      else if (entry.isDirectory()) pending.push(path);
      else if (entry.isSymbolicLink()) found.push({ path, kind: "symlink" });
      else if (!entry.isFile()) found.push({ path, kind: "special" });
    }
  }
  return found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

function listed(paths: readonly string[]): string {
  const more =
    paths.length > MAX_FIXTURE_ENTRIES_REPORTED
      ? ` and ${paths.length - MAX_FIXTURE_ENTRIES_REPORTED} more`
      : "";
  return `${paths.slice(0, MAX_FIXTURE_ENTRIES_REPORTED).join(", ")}${more}`;
}

async function fixtureContentProblems(
  manifestDir: string,
  reference: PathReference,
): Promise<InputProblem[]> {
  const fixtureDir = resolve(manifestDir, reference.path);
  const shownFixture = JSON.stringify(reference.path);
  const real = await realpath(fixtureDir).catch(() => fixtureDir);
  if (dirname(real) === real)
    return [
      {
        path: reference.field,
        message: `${shownFixture} is the file system root (${real}); a fixture is a small repository copied for every trial`,
      },
    ];
  const irregular = await fixtureIrregularEntries(fixtureDir);
  const problems: InputProblem[] = [];
  if (irregular.some((entry) => entry.kind === "too-many"))
    problems.push({
      path: reference.field,
      message: `${shownFixture} holds more than ${MAX_FIXTURE_ENTRIES} files and directories; a fixture is the repository a trial works on, copied for every trial (is the path right?)`,
    });
  const git = irregular.filter((entry) => entry.kind === "git-metadata");
  if (git.length > 0)
    problems.push({
      path: reference.field,
      message: `${shownFixture} contains ${listed(git.map((entry) => entry.path))}; ${FIXTURE_GIT_DIR_REASON}`,
    });
  const other = irregular.filter(
    (entry) => entry.kind !== "git-metadata" && entry.kind !== "too-many",
  );
  if (other.length > 0)
    problems.push({
      path: reference.field,
      message: `${shownFixture} contains ${listed(
        other.map(
          (entry) =>
            `${entry.path}${entry.kind === "symlink" ? " (symbolic link)" : " (special file)"}`,
        ),
      )}; a fixture may hold only regular files and directories (replace links with copies)`,
    });
  return problems;
}

/** Every problem with the referenced paths, in the order given. */
export async function pathReferencesProblems(
  manifestDir: string,
  references: readonly PathReference[],
): Promise<InputProblem[]> {
  const realManifestDir = await realDirectory(manifestDir);
  const results = await Promise.all(
    references.map(async (reference) => {
      const problems = await referenceProblems(manifestDir, realManifestDir, reference);
      if (problems.length === 0 && reference.regularContentsOnly === true)
        problems.push(...(await fixtureContentProblems(manifestDir, reference)));
      return problems;
    }),
  );
  return results.flat();
}

// `harness ci`'s inputs (I/O): the base's setup files read from git into a hidden folder beside
// the manifest, and the derived manifest that compares them with the working tree's. Both live in
// the manifest's directory (a manifest's paths stay inside it) and go when the run is done.
import { readFile, realpath, rm, rmdir, writeFile } from "node:fs/promises";
import { dirname, join, posix, relative, sep } from "node:path";
import { InvalidInputError } from "../../shared/index.js";
import { ExperimentInputError } from "../errors.js";
import { createRunLock } from "../run/run-lock.js";
import { CI_BASELINE, CI_CANDIDATE, deriveCiManifest } from "./derive.js";
import { commitOf, extractAtCommit, repositoryRoot } from "./git.js";

export interface PreparedCi {
  /** The derived manifest (`<manifest dir>/.harnesslab-ci-<random>.json`). */
  manifestPath: string;
  /** The manifest's variant under test. */
  variant: string;
  baseCommit: string;
  /** Removes the derived manifest and the base's files, and gives up the folder's lock. */
  cleanup(): Promise<void>;
}

const toPosix = (path: string) => path.split(sep).join("/");

/** The folders to read from the base: each setup file's folder (its components' sources are there). */
function foldersOf(manifestRelativePaths: readonly string[], manifestFromRoot: string): string[] {
  const folders = [
    ...new Set(
      manifestRelativePaths.map((path) =>
        posix.normalize(posix.join(manifestFromRoot, posix.dirname(path.replace(/^(\.\/)+/, "")))),
      ),
    ),
  ].sort();
  // A folder inside another one read already adds nothing.
  return folders.filter(
    (folder) =>
      !folders.some(
        (other) => other !== folder && (other === "." || folder.startsWith(`${other}/`)),
      ),
  );
}

/** The variant under test as a folder name part (two variants of one base run side by side). */
function derivedVariantName(document: unknown, variant: string | undefined): string {
  const variants = (document as { variants?: unknown }).variants;
  const only =
    Array.isArray(variants) && variants.length === 1
      ? (variants[0] as { id?: unknown }).id
      : undefined;
  const name = variant ?? (typeof only === "string" ? only : "variant");
  return name.replace(/[^A-Za-z0-9_-]/g, "-").slice(0, 64);
}

export async function prepareCi(options: {
  manifestPath: string;
  baselineRef: string;
  variant?: string;
}): Promise<PreparedCi> {
  // As git names the repository's root: a path through a symbolic link is the same folder.
  const manifestDir = await realpath(dirname(options.manifestPath)).catch(() =>
    dirname(options.manifestPath),
  );
  let document: unknown;
  try {
    document = JSON.parse(await readFile(options.manifestPath, "utf8"));
  } catch (error) {
    throw new InvalidInputError(
      options.manifestPath,
      [{ path: "(file)", message: `cannot be read as JSON: ${(error as Error).message}` }],
      "the manifest cannot be read",
    );
  }
  const root = await repositoryRoot(manifestDir);
  const baseCommit = await commitOf(root, options.baselineRef);
  const manifestFromRoot = toPosix(relative(root, manifestDir)) || ".";
  // Named after the base, so the derived manifest is the same on a second run (`--resume` finds
  // the run it continues); a folder left by a killed run is replaced.
  const hidden = `.harnesslab-ci-${baseCommit.slice(0, 12)}-${derivedVariantName(document, options.variant)}`;
  const baseDir = manifestFromRoot === "." ? hidden : `${hidden}/${manifestFromRoot}`;
  const derived = deriveCiManifest(document, options.variant, baseDir);
  if (!derived.ok)
    throw new InvalidInputError(options.manifestPath, [derived.problem], derived.problem.message);
  const fixtureHoldsBase = (derived.document.tasks as unknown[]).some((task) => {
    const fixture = (task as { fixture?: unknown }).fixture;
    return typeof fixture === "string" && posix.normalize(fixture) === ".";
  });
  if (fixtureHoldsBase)
    throw new InvalidInputError(
      options.manifestPath,
      [
        {
          path: "tasks[].fixture",
          message:
            "is the manifest's own folder, where harness ci puts the base's setup: move the manifest out of the fixture",
        },
      ],
      "a fixture is the manifest's folder",
    );
  const baseRoot = join(manifestDir, hidden);
  const manifestPath = join(manifestDir, `${hidden}.json`);
  // Two runs of the same base and variant would share the folder, and each replaces it: one at
  // a time, as a run's --out is (a dead holder's lock is taken over).
  const lockDir = join(manifestDir, `${hidden}.lock`);
  const lock = createRunLock(lockDir, { takeOverStale: true });
  try {
    await lock.acquire();
  } catch (error) {
    if (!(error instanceof ExperimentInputError)) throw error;
    throw new ExperimentInputError(
      options.manifestPath,
      [
        {
          path: hidden,
          message: `another harness ci of ${baseCommit.slice(0, 12)} for this variant is using this folder: ${error.problems.map((p) => p.message).join("; ")}`,
        },
      ],
      "the base's setup folder is in use",
    );
  }
  const removeFiles = async () => {
    await rm(baseRoot, { recursive: true, force: true });
    await rm(manifestPath, { force: true });
  };
  const cleanup = async () => {
    await removeFiles();
    await lock.release();
    await rmdir(lockDir).catch(() => {});
  };
  await removeFiles();
  try {
    await extractAtCommit(
      root,
      baseCommit,
      {
        files: derived.setupPaths.map((path) =>
          posix.normalize(posix.join(manifestFromRoot, path.replace(/^(\.\/)+/, ""))),
        ),
        folders: foldersOf(derived.setupPaths, manifestFromRoot),
      },
      baseRoot,
    );
    await writeFile(manifestPath, `${JSON.stringify(derived.document, null, 2)}\n`);
  } catch (error) {
    await cleanup();
    throw error;
  }
  return { manifestPath, variant: derived.variant, baseCommit, cleanup };
}

export { CI_BASELINE, CI_CANDIDATE };

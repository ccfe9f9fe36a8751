// The pull request's base as git has it (I/O): the commit a ref names, and the setup's files at
// that commit, read with `git archive` (the working tree is never checked out or touched).
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { runCommand } from "../../shared/index.js";

const GIT_TIMEOUT_MS = 120_000;

/** Git without the user's or the system's configuration (hooks, aliases, pagers). */
const gitEnv = (): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: process.env.HOME ?? "/",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_TERMINAL_PROMPT: "0",
  LANG: "C",
});

async function git(cwd: string, args: readonly string[]) {
  return runCommand(["git", ...args], { cwd, env: gitEnv(), timeoutMs: GIT_TIMEOUT_MS });
}

/** Thrown when git cannot say what `harness ci` needs: the caller's input error. */
export class CiGitError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CiGitError";
  }
}

/** The root of the work tree that holds `dir`. */
export async function repositoryRoot(dir: string): Promise<string> {
  const result = await git(dir, ["rev-parse", "--show-toplevel"]);
  if (result.exitCode !== 0)
    throw new CiGitError(
      `${dir} is not in a git repository: harness ci reads the base's setup from git (${result.stderr.trim()})`,
    );
  return result.stdout.trim();
}

/** The commit `ref` names, or why it names none. */
export async function commitOf(root: string, ref: string): Promise<string> {
  if (ref.startsWith("-") || ref.includes("\0"))
    throw new CiGitError(`--baseline-ref ${JSON.stringify(ref)} is not a ref`);
  const result = await git(root, [
    "rev-parse",
    "--verify",
    "--quiet",
    "--end-of-options",
    `${ref}^{commit}`,
  ]);
  const sha = result.stdout.trim();
  if (result.exitCode !== 0 || !/^[0-9a-f]{40,64}$/.test(sha))
    throw new CiGitError(
      `--baseline-ref ${JSON.stringify(ref)} names no commit in ${root} (fetch the base branch first: actions/checkout with fetch-depth: 0)`,
    );
  return sha;
}

/**
 * Writes `folders` (relative to the repository's root, `/`-separated) as they are at `commit`
 * under `into`, at the same relative paths, once each of `files` is known to be there: a file
 * the commit does not have is named.
 */
export async function extractAtCommit(
  root: string,
  commit: string,
  { files, folders }: { files: readonly string[]; folders: readonly string[] },
  into: string,
): Promise<void> {
  for (const path of [...files, ...folders]) {
    const found = await git(root, ["cat-file", "-e", `${commit}:${path}`]);
    if (found.exitCode !== 0)
      throw new CiGitError(
        `${path} does not exist at the base (${commit.slice(0, 12)}): there is no setup there to compare with`,
      );
  }
  await mkdir(into, { recursive: true });
  const archive = join(into, ".base.tar");
  try {
    const written = await git(root, [
      "archive",
      "--format=tar",
      "-o",
      archive,
      commit,
      "--",
      ...folders,
    ]);
    if (written.exitCode !== 0)
      throw new CiGitError(`git archive of the base failed: ${written.stderr.trim()}`);
    const unpacked = await runCommand(["tar", "-xf", archive, "-C", into], {
      cwd: into,
      env: gitEnv(),
      timeoutMs: GIT_TIMEOUT_MS,
    });
    if (unpacked.exitCode !== 0)
      throw new CiGitError(`unpacking the base failed: ${unpacked.stderr.trim()}`);
  } finally {
    await rm(archive, { force: true });
  }
}

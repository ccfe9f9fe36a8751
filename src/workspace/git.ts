import { randomBytes } from "node:crypto";
import { appendFile, readFile, rm, writeFile } from "node:fs/promises";
import { devNull, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { type CommandResult, minimalEnv, runCommand } from "../shared/index.js";
import type { CapturedPatch, PatchStats } from "./types.js";
import { WorkspaceError } from "./types.js";

const GIT_TIMEOUT_MS = 120_000;
/** A fixed instant, so the baseline commit id depends on the fixture alone. */
const FIXED_DATE = "946684800 +0000";
export const BASELINE_IDENTITY = { name: "harnesslab", email: "harnesslab@localhost" } as const;

/**
 * The environment of every git the harness runs: no system or user configuration (a user's
 * aliases, hooks, diff drivers or signing settings must not shape the evidence), a fixed
 * identity and date, no prompts, and no discovery of a repository above the trial.
 */
export function gitEnv(root: string, home: string): NodeJS.ProcessEnv {
  return minimalEnv({
    HOME: home,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: devNull,
    GIT_CEILING_DIRECTORIES: dirname(root),
    GIT_TERMINAL_PROMPT: "0",
    GIT_AUTHOR_NAME: BASELINE_IDENTITY.name,
    GIT_AUTHOR_EMAIL: BASELINE_IDENTITY.email,
    GIT_AUTHOR_DATE: FIXED_DATE,
    GIT_COMMITTER_NAME: BASELINE_IDENTITY.name,
    GIT_COMMITTER_EMAIL: BASELINE_IDENTITY.email,
    GIT_COMMITTER_DATE: FIXED_DATE,
    LC_ALL: "C",
  });
}

function tail(text: string, limit = 2000): string {
  return text.length > limit ? `…${text.slice(-limit)}` : text;
}

/** Runs git; anything but exit 0 becomes a WorkspaceError with the argv and output as evidence. */
export async function git(
  args: readonly string[],
  root: string,
  home: string,
  code: "git-failed" | "patch-failed" = "git-failed",
): Promise<CommandResult> {
  const result = await runCommand(["git", ...args], {
    cwd: root,
    env: gitEnv(root, home),
    timeoutMs: GIT_TIMEOUT_MS,
  });
  if (result.exitCode !== 0) {
    const why = result.spawnError
      ? `could not start git (${result.spawnError})`
      : result.timedOut
        ? `timed out after ${GIT_TIMEOUT_MS} ms`
        : `exited with ${result.exitCode ?? result.signal}`;
    throw new WorkspaceError(code, `git ${args[0]} ${why}`, {
      argv: ["git", ...args],
      exitCode: result.exitCode,
      signal: result.signal,
      timedOut: result.timedOut,
      stderr: tail(result.stderr),
      ...(result.spawnError ? { spawnError: result.spawnError } : {}),
    });
  }
  return result;
}

function configValue(value: string): string {
  return `"${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

/**
 * Makes `root` a repository with one commit holding exactly the fixture. The settings are written
 * into the repository's own config so that a git started later inside the trial (by a validation
 * command) also runs no hooks and rewrites no line endings.
 */
export async function createBaseline(root: string, home: string, hooksDir: string): Promise<void> {
  // An empty template: no sample hooks, no info/exclude from the user's installation.
  await git(["init", "--quiet", "--template=", "."], root, home);
  await appendFile(
    join(root, ".git", "config"),
    [
      "[core]",
      `\thooksPath = ${configValue(hooksDir)}`,
      "\tautocrlf = false",
      "\tsafecrlf = false",
      "\tfsmonitor = false",
      "\tuntrackedCache = false",
      "[user]",
      `\tname = ${BASELINE_IDENTITY.name}`,
      `\temail = ${BASELINE_IDENTITY.email}`,
      "[commit]",
      "\tgpgsign = false",
      "[gc]",
      "\tauto = 0",
      "",
    ].join("\n"),
  );
  // --force: the baseline is the whole fixture, even files its own .gitignore would skip.
  await git(["add", "--all", "--force"], root, home);
  await git(
    ["commit", "--quiet", "--no-verify", "--allow-empty", "--message", "harnesslab baseline"],
    root,
    home,
  );
}

function parseNumstat(output: Buffer): { entries: PatchEntry[]; patch: Buffer } {
  const entries: PatchEntry[] = [];
  let offset = 0;
  while (offset < output.length) {
    const end = output.indexOf(0, offset);
    if (end === -1) break;
    const record = output.subarray(offset, end).toString("utf8");
    offset = end + 1;
    // An empty record separates the -z numstat section from the patch text.
    if (record === "") break;
    const match = /^(\d+|-)\t(\d+|-)\t([\s\S]*)$/.exec(record);
    if (!match)
      throw new WorkspaceError("patch-failed", "unexpected git diff --numstat output", { record });
    entries.push({
      path: match[3]!,
      insertions: match[1] === "-" ? null : Number(match[1]),
      deletions: match[2] === "-" ? null : Number(match[2]),
    });
  }
  return { entries, patch: output.subarray(offset) };
}

interface PatchEntry {
  path: string;
  insertions: number | null;
  deletions: number | null;
}

/**
 * The trial's change against the baseline as a standard binary patch. New files are first marked
 * intent-to-add (still honouring the fixture's .gitignore, so caches a validation command leaves
 * behind stay out of the patch), then `git diff HEAD` covers additions, edits, deletions and mode
 * changes in one pass. Git writes the patch to a file so its bytes survive exactly: text that is
 * not UTF-8 would be damaged by decoding a pipe into a string.
 */
export async function capturePatch(
  root: string,
  options: { tempDir?: string } = {},
): Promise<CapturedPatch> {
  const home = dirname(root);
  const outputFile = join(
    options.tempDir ?? tmpdir(),
    `harnesslab-patch-${randomBytes(8).toString("hex")}`,
  );
  try {
    await git(["add", "--all", "--intent-to-add"], root, home, "patch-failed");
    await git(
      [
        "diff",
        "HEAD",
        "--binary",
        "--no-ext-diff",
        "--no-textconv",
        "--no-renames",
        "--no-color",
        "--src-prefix=a/",
        "--dst-prefix=b/",
        "--numstat",
        "-z",
        `--output=${outputFile}`,
      ],
      root,
      home,
      "patch-failed",
    );
    const { entries, patch } = parseNumstat(await readFile(outputFile));
    const stats: PatchStats = {
      filesChanged: entries.length,
      insertions: entries.reduce((sum, e) => sum + (e.insertions ?? 0), 0),
      deletions: entries.reduce((sum, e) => sum + (e.deletions ?? 0), 0),
      binaryFiles: entries.filter((e) => e.insertions === null).length,
      patchBytes: patch.length,
    };
    const changedFiles = entries.map((e) => e.path).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return {
      patch: patch.toString("utf8"),
      patchBytes: new Uint8Array(patch),
      changedFiles,
      stats,
    };
  } catch (error) {
    if (error instanceof WorkspaceError) throw error;
    throw new WorkspaceError(
      "patch-failed",
      `cannot capture the patch: ${(error as Error).message}`,
      {
        code: (error as NodeJS.ErrnoException).code,
      },
    );
  } finally {
    await rm(outputFile, { force: true });
  }
}

export type ApplyPatchResult = { ok: true } | { ok: false; message: string };

/**
 * Applies a patch to a directory's files with `git apply` (no index, no commit). Git refuses paths
 * that leave the directory or pass through a symlink, so a hostile patch cannot write elsewhere.
 */
export async function applyPatch(
  dir: string,
  patch: string | Uint8Array,
  options: { tempDir?: string } = {},
): Promise<ApplyPatchResult> {
  const patchFile = join(
    options.tempDir ?? tmpdir(),
    `harnesslab-apply-${randomBytes(8).toString("hex")}.diff`,
  );
  try {
    await writeFile(patchFile, patch);
    const result = await runCommand(
      ["git", "apply", "--binary", "--whitespace=nowarn", patchFile],
      { cwd: dir, env: gitEnv(dir, dirname(dir)), timeoutMs: GIT_TIMEOUT_MS },
    );
    if (result.exitCode === 0) return { ok: true };
    return {
      ok: false,
      message: tail(
        result.spawnError ?? (result.stderr.trim() || `git apply exited with ${result.exitCode}`),
      ),
    };
  } finally {
    await rm(patchFile, { force: true });
  }
}

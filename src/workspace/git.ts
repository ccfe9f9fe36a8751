import { randomBytes } from "node:crypto";
import { mkdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { readFile, rm, stat, writeFile } from "node:fs/promises";
import { devNull, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { type CommandResult, minimalEnv, runCommand } from "../shared/index.js";
import { lstatNow, readFileNow, removeAll } from "./sliced-fs.js";
import type { CapturedPatch, CapturePatchOptions, GitBaseline, PatchStats } from "./types.js";
import { WorkspaceError } from "./types.js";

const GIT_TIMEOUT_MS = 120_000;
/** A fixed instant, so the baseline commit id depends on the fixture alone. */
const FIXED_DATE = "946684800 +0000";
const BASELINE_IDENTITY = { name: "harnesslab", email: "harnesslab@localhost" } as const;

/**
 * The environment of every git the harness runs: no system or user configuration (a user's
 * aliases, hooks, diff drivers or signing settings must not shape the evidence), no system
 * attributes, no replacement objects (a `refs/replace` entry could swap the baseline commit for
 * another), a fixed identity and date, no prompts, and no discovery of a repository above the
 * trial.
 */
function gitEnv(root: string, home: string): NodeJS.ProcessEnv {
  return minimalEnv({
    HOME: home,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: devNull,
    GIT_ATTR_NOSYSTEM: "1",
    GIT_NO_REPLACE_OBJECTS: "1",
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

/**
 * Settings given on the command line of every git the harness runs. Command-line settings win
 * over the repository's own `.git/config`, which code run during the trial (a validation command
 * such as `npm test` runs agent-written code) can rewrite: without these, `core.fsmonitor` or a
 * hooks path planted there would run a program inside the harness's own git. The excludes and
 * attributes files are pinned because their defaults live under HOME, which is the executor's
 * scratch directory. Pathspecs are literal, so a file name is never read as a glob.
 */
const HARNESS_GIT_OPTIONS: readonly string[] = [
  "--literal-pathspecs",
  "-c",
  "core.fsmonitor=false",
  "-c",
  `core.hooksPath=${devNull}`,
  "-c",
  "core.untrackedCache=false",
  "-c",
  "core.pager=cat",
  "-c",
  `core.excludesFile=${devNull}`,
  "-c",
  `core.attributesFile=${devNull}`,
  "-c",
  "core.autocrlf=false",
  "-c",
  "core.safecrlf=false",
  "-c",
  "diff.external=",
  "-c",
  "commit.gpgSign=false",
  "-c",
  "gc.auto=0",
  "-c",
  "maintenance.auto=false",
  // Both describe objects the repository already holds (a commit's tree, which pack holds an
  // object) from files beside them; a planted one could make the baseline commit read as another.
  "-c",
  "core.commitGraph=false",
  "-c",
  "core.multiPackIndex=false",
];

function tail(text: string, limit = 2000): string {
  return text.length > limit ? `…${text.slice(-limit)}` : text;
}

function gitFailure(
  args: readonly string[],
  result: CommandResult,
  code: "git-failed" | "patch-failed",
): WorkspaceError {
  const why = result.spawnError
    ? `could not start git (${result.spawnError})`
    : result.timedOut
      ? `timed out after ${GIT_TIMEOUT_MS} ms`
      : `exited with ${result.exitCode ?? result.signal}`;
  return new WorkspaceError(code, `git ${args[0]} ${why}`, {
    argv: result.argv,
    exitCode: result.exitCode,
    signal: result.signal,
    timedOut: result.timedOut,
    stderr: tail(result.stderr),
    ...(result.spawnError ? { spawnError: result.spawnError } : {}),
  });
}

/** Runs git; anything but exit 0 becomes a WorkspaceError with the argv and output as evidence. */
export async function git(
  args: readonly string[],
  root: string,
  home: string,
  code: "git-failed" | "patch-failed" = "git-failed",
  extraEnv: NodeJS.ProcessEnv = {},
): Promise<CommandResult> {
  const result = await runCommand(["git", ...HARNESS_GIT_OPTIONS, ...args], {
    cwd: root,
    env: { ...gitEnv(root, home), ...extraEnv },
    timeoutMs: GIT_TIMEOUT_MS,
  });
  if (result.exitCode !== 0) throw gitFailure(args, result, code);
  return result;
}

/**
 * The repository's `info/attributes`, which outranks every `.gitattributes` in the tree: no
 * line-ending conversion, no clean or smudge filter, no keyword expansion, no re-encoding, and
 * binary detection left to git. A `.gitattributes` the trial wrote is then only a file of its
 * change; it cannot make the patch differ from the bytes on disk, or `git apply` write others.
 */
const NEUTRAL_ATTRIBUTES =
  "* -text -eol -crlf -filter -ident -working-tree-encoding !diff !merge\n";

/** Made on the main thread: two small calls cost less there than through the thread pool. */
export function writeNeutralAttributes(gitDir: string): void {
  mkdirSync(join(gitDir, "info"), { recursive: true });
  // Exclusive create: never follows a link someone put in its place.
  writeFileSync(join(gitDir, "info", "attributes"), NEUTRAL_ATTRIBUTES, { flag: "wx" });
}

function configValue(value: string): string {
  return `"${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

/**
 * A trial repository's config: what `git init` wrote, then the harness's settings, written into
 * the repository so that a git started later inside the trial (by a validation command) also
 * runs no hooks and rewrites no line endings.
 */
export function trialConfig(initConfig: string, hooksDir: string): string {
  return (
    initConfig +
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
    ].join("\n")
  );
}

/** What `createBaseline` made beyond what a trial keeps: enough to make repositories like it. */
export interface BuiltBaseline extends GitBaseline {
  /** The config `git init` wrote, before the harness's settings. */
  initConfig: string;
  /** The text of `.git/HEAD` (which branch the commit is on). */
  head: string;
}

export interface CreateBaselineOptions {
  /**
   * Writes the objects as packs (blobs streamed into one pack as they are added, then the trees
   * and the commit into another) instead of one file per object: a baseline shared by many
   * trials is then a handful of files to link.
   */
  packed?: boolean;
}

/**
 * Makes `root` a repository with one commit holding exactly the fixture. Returns what the harness
 * must keep to read the trial's change later without trusting the repository: the commit id and
 * the config.
 */
export async function createBaseline(
  root: string,
  home: string,
  hooksDir: string,
  options: CreateBaselineOptions = {},
): Promise<BuiltBaseline> {
  // An empty template: no sample hooks, no info/exclude from the user's installation.
  await git(["init", "--quiet", "--template=", "."], root, home);
  const configPath = join(root, ".git", "config");
  const initConfig = await readFile(configPath, "utf8");
  await writeFile(configPath, trialConfig(initConfig, hooksDir));
  writeNeutralAttributes(join(root, ".git"));
  // Files above core.bigFileThreshold go straight into one pack during `add` (git's bulk
  // check-in); a threshold of one byte sends every blob there. Level 1 keeps that quick.
  const packing = options.packed
    ? ["-c", "core.bigFileThreshold=1", "-c", "pack.compression=1"]
    : [];
  // --force: the baseline is the whole fixture, even files its own .gitignore would skip.
  await git([...packing, "add", "--all", "--force"], root, home);
  await git(
    ["commit", "--quiet", "--no-verify", "--allow-empty", "--message", "harnesslab baseline"],
    root,
    home,
  );
  // Packs what is still loose (trees, the commit, files of a byte or less) and deletes it.
  if (options.packed) await git(["repack", "-d", "-q"], root, home);
  const indexPath = join(root, ".git", "index");
  return {
    commit: await readHeadCommit(join(root, ".git")),
    config: await readFile(configPath, "utf8"),
    index: await readFile(indexPath),
    indexMtime: (await stat(indexPath)).mtime,
    initConfig,
    head: await readFile(join(root, ".git", "HEAD"), "utf8"),
  };
}

/** HEAD's commit id, read from the repository the harness just created (no git process needed). */
async function readHeadCommit(gitDir: string): Promise<string> {
  const head = (await readFile(join(gitDir, "HEAD"), "utf8")).trim();
  const ref = /^ref: (refs\/heads\/[^\s]+)$/.exec(head);
  const commit = ref ? (await readFile(join(gitDir, ref[1]!), "utf8")).trim() : head;
  if (!/^[0-9a-f]{40,64}$/.test(commit))
    throw new WorkspaceError("git-failed", "the baseline commit could not be read", { head });
  return commit;
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
 * Files that make git read objects, or the repository itself, from somewhere else: a linked
 * worktree's pointer to its common directory and the object stores borrowed from elsewhere.
 * The harness's repositories never have them.
 */
const REDIRECTING_FILES = ["commondir", "objects/info/alternates", "objects/info/http-alternates"];

type EntryKind = "missing" | "directory" | "symlink" | "other";

function damaged(path: string, kind: EntryKind): WorkspaceError {
  return new WorkspaceError(
    "patch-failed",
    `the trial's ${path} is no longer the directory the harness created`,
    { path, kind },
    { causedByTrial: true },
  );
}

/**
 * Puts back what the harness owns in the trial's `.git` before reading it: the config it wrote
 * (code run during the trial may have added a filter driver, `core.worktree`, an include, …), an
 * `info/` holding only the neutral attributes (an `info/exclude` or other attributes there would
 * hide new files or convert their bytes), and no file that sends git to another repository or
 * object store (the harness's git runs outside the sandbox and must read nothing but the trial).
 * A `.git` or object directory that is no longer a plain directory is refused rather than
 * followed, so restoring can never write, nor git read, through a planted link; only the trial
 * can have done that, so the error says it was the trial's doing.
 */
async function restoreRepository(root: string, baseline: GitBaseline): Promise<void> {
  const gitDir = join(root, ".git");
  const kind = entryKind(gitDir);
  if (kind !== "directory") throw damaged(".git", kind);
  // A path under an `objects` that is a link is only stat'ed, then refused.
  const found = ["objects", "objects/info", "objects/pack"].map((dir) =>
    entryKind(join(gitDir, dir)),
  );
  if (found[0] !== "directory") throw damaged(".git/objects", found[0]!);
  for (const [i, dir] of ["objects/info", "objects/pack"].entries()) {
    const inner = found[i + 1]!;
    if (inner !== "directory" && inner !== "missing") throw damaged(`.git/${dir}`, inner);
  }
  for (const file of [...REDIRECTING_FILES, "info", "config"]) await removeAll(join(gitDir, file));
  writeNeutralAttributes(gitDir);
  // Exclusive create: never follows a link someone put back in the meantime.
  writeFileSync(join(gitDir, "config"), baseline.config, { flag: "wx" });
}

function entryKind(path: string): EntryKind {
  const stats = lstatNow(path);
  if (stats === undefined) return "missing";
  return stats.isDirectory() ? "directory" : stats.isSymbolicLink() ? "symlink" : "other";
}

/**
 * Why git could not diff against the recorded baseline: git itself broken or gone (it fails
 * outside the trial too: the machine's failure, `git-failed`), the baseline commit gone from the
 * repository (the trial's doing), or `failure` itself. Asked only after a failure, so a capture
 * that works spends no process on it.
 */
async function missingBaseline(
  root: string,
  home: string,
  baseline: GitBaseline,
  failure: unknown,
): Promise<unknown> {
  // In the harness's own folder, where nothing the trial did can reach.
  const usable = await runCommand(["git", ...HARNESS_GIT_OPTIONS, "version"], {
    cwd: home,
    env: gitEnv(root, home),
    timeoutMs: GIT_TIMEOUT_MS,
  });
  if (usable.exitCode !== 0 && failure instanceof WorkspaceError)
    return new WorkspaceError("git-failed", failure.message, {
      ...failure.evidence,
      gitVersion: usable.spawnError ?? tail(usable.stderr || `exited with ${usable.exitCode}`),
    });
  const present = await runCommand(
    ["git", ...HARNESS_GIT_OPTIONS, "cat-file", "-e", `${baseline.commit}^{commit}`],
    { cwd: root, env: gitEnv(root, home), timeoutMs: GIT_TIMEOUT_MS },
  );
  if (present.exitCode === 0) return failure;
  return new WorkspaceError(
    "patch-failed",
    `the baseline commit ${baseline.commit} is no longer in the trial's repository`,
    { commit: baseline.commit, exitCode: present.exitCode, stderr: tail(present.stderr) },
    { causedByTrial: true },
  );
}

/**
 * The trial's change against the baseline as a standard binary patch. Every new file is marked
 * intent-to-add whatever `.gitignore`, `info/exclude` or git's configuration say (an ignored
 * `.npmrc` is as much part of the change as an edited source file), then `git diff <baseline>`
 * covers additions, edits, deletions, mode changes and symlinks in one pass, under the neutral
 * attributes, so the patch holds the bytes on disk.
 *
 * Code run during the trial (validation commands run agent-written code) can change the trial's
 * repository, so its config, HEAD and index are not trusted: with `baseline`, the config is
 * restored and the diff is taken against the recorded commit, never HEAD (a commit made during
 * the trial would otherwise hide its changes). The index is a fresh one built from that commit,
 * outside the trial, so flags set on the trial's own index (`--assume-unchanged`,
 * `--skip-worktree`) hide nothing and the trial's index is left as the agent left it. The object
 * store is still trusted: a rewritten object file would go unnoticed. Git writes the patch to a
 * file so its bytes survive exactly: text that is not UTF-8 would be damaged by decoding a pipe
 * into a string.
 */
export async function capturePatch(
  root: string,
  options: CapturePatchOptions = {},
): Promise<CapturedPatch> {
  const home = dirname(root);
  const tempDir = options.tempDir ?? tmpdir();
  const unique = randomBytes(8).toString("hex");
  const outputFile = join(tempDir, `harnesslab-patch-${unique}`);
  const indexFile = join(tempDir, `harnesslab-index-${unique}`);
  const env = { GIT_INDEX_FILE: indexFile };
  try {
    const baseline = options.baseline;
    if (baseline !== undefined) await restoreRepository(root, baseline);
    const commit =
      baseline?.commit ??
      (
        await git(["rev-parse", "--verify", "HEAD^{commit}"], root, home, "patch-failed")
      ).stdout.trim();
    if (baseline !== undefined) {
      writeFileSync(indexFile, baseline.index);
      // Git trusts an entry whose size and mtime match only when the file is older than the
      // index itself (its "racy git" check). The copy keeps the baseline index's own mtime, so a
      // file changed within the same clock tick as the baseline is still read, not skipped.
      utimesSync(indexFile, baseline.indexMtime, baseline.indexMtime);
    } else await git(["read-tree", commit], root, home, "patch-failed", env);
    const diffed = async () => {
      if (options.addsPaths !== false)
        await git(["add", "--all", "--force", "--intent-to-add"], root, home, "patch-failed", env);
      await git(
        [
          "diff",
          commit,
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
        env,
      );
    };
    await diffed().catch(async (error: unknown) => {
      throw baseline === undefined ? error : await missingBaseline(root, home, baseline, error);
    });
    const { entries, patch } = parseNumstat(await readFileNow(outputFile));
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
    for (const file of [outputFile, indexFile, `${indexFile}.lock`]) rmSync(file, { force: true });
  }
}

export type ApplyPatchResult = { ok: true } | { ok: false; message: string };

/**
 * Applies a patch to a directory's files with `git apply` (no index, no commit), given on its
 * stdin. Git refuses paths that leave the directory or pass through a symlink, so a hostile patch
 * cannot write elsewhere.
 */
export async function applyPatch(
  dir: string,
  patch: string | Uint8Array,
): Promise<ApplyPatchResult> {
  const result = await runCommand(
    ["git", ...HARNESS_GIT_OPTIONS, "apply", "--binary", "--whitespace=nowarn"],
    { cwd: dir, env: gitEnv(dir, dirname(dir)), timeoutMs: GIT_TIMEOUT_MS, input: patch },
  );
  if (result.exitCode === 0) return { ok: true };
  return {
    ok: false,
    message: tail(
      result.spawnError ?? (result.stderr.trim() || `git apply exited with ${result.exitCode}`),
    ),
  };
}

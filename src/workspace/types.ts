import { z } from "zod";

/**
 * Why a workspace step failed. Each is an environment problem (or an unusable fixture), so the
 * runner records it as the trial's infrastructure error with `evidence`, never as an agent failure.
 */
const WORKSPACE_ERROR_CODES = [
  "fixture-symlink",
  "fixture-special-file",
  "fixture-git-dir",
  "snapshot-failed",
  "copy-failed",
  "git-failed",
  "patch-failed",
  "cleanup-failed",
  "fixture-changed",
  "too-many-entries",
] as const;
export type WorkspaceErrorCode = (typeof WORKSPACE_ERROR_CODES)[number];

/**
 * Why a fixture may not hold a `.git` at any depth: a fixture's own repository would carry its
 * config and hooks into the trial, and a nested one would hide its files from the baseline
 * commit. The manifest loader reports the same reason, so validation and runs agree.
 */
export const FIXTURE_GIT_DIR_REASON = "a fixture must be plain files (remove its git metadata)";

export class WorkspaceError extends Error {
  readonly code: WorkspaceErrorCode;
  /** What was seen: the offending path, the git argv with its exit code and stderr tail, … */
  readonly evidence: Record<string, unknown>;
  /**
   * True when only the trial can have caused it (its `.git` deleted or replaced, the baseline
   * commit gone): then it is the trial's failure, not the environment's.
   */
  readonly causedByTrial: boolean;
  constructor(
    code: WorkspaceErrorCode,
    message: string,
    evidence: Record<string, unknown> = {},
    options: { causedByTrial?: boolean } = {},
  ) {
    super(message);
    this.name = "WorkspaceError";
    this.code = code;
    this.evidence = evidence;
    this.causedByTrial = options.causedByTrial ?? false;
  }
}

export function isWorkspaceError(error: unknown): error is WorkspaceError {
  return error instanceof WorkspaceError;
}

const treeEntrySchema = z.strictObject({
  /** Relative to the snapshot root, `/`-separated. */
  path: z.string(),
  /** `symlink` and `other` appear only in trial snapshots; fixtures reject them. */
  kind: z.enum(["file", "dir", "symlink", "other"]),
  /** File size; a symlink's target length; 0 for directories. */
  bytes: z.number().int().min(0),
  /** Hex SHA-256 of the content (of the link text for a symlink); null for directories. */
  sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .nullable(),
  /** Files only: whether the owner may execute it (the mode bit git records). */
  executable: z.boolean().optional(),
});
export type TreeEntry = z.infer<typeof treeEntrySchema>;

export const treeSnapshotSchema = z.strictObject({
  /** Entries sorted by path (code-unit order). */
  files: z.array(treeEntrySchema),
  /** `sha256:<hex>` over every entry's kind, path, size and content hash. */
  hash: z.string().regex(/^sha256:[0-9a-f]{64}$/),
});
export type TreeSnapshot = z.infer<typeof treeSnapshotSchema>;

export interface SnapshotOptions {
  /**
   * `fixture` (default): the tree must be plain files and directories; a symlink, a special file
   * or a `.git` anywhere is a WorkspaceError. `trial`: the trial root's own `.git` (the harness's
   * baseline) is skipped and anything the run left behind is recorded, symlinks included.
   */
  mode?: "fixture" | "trial";
  /**
   * The most files, directories and links a `trial` snapshot lists (default
   * MAX_TRIAL_ENTRIES); more is the trial's doing (`too-many-entries`, caused by the trial).
   */
  maxEntries?: number;
}

export interface SnapshotDiff {
  added: string[];
  modified: string[];
  deleted: string[];
}

export interface PatchStats {
  filesChanged: number;
  insertions: number;
  deletions: number;
  binaryFiles: number;
  patchBytes: number;
}

export interface CapturedPatch {
  /** `git diff --binary` against the baseline commit; applies with `git apply` to the fixture. */
  patch: string;
  /** The same patch as bytes, exactly as git wrote it (write these to `patch.diff`). */
  patchBytes: Uint8Array;
  /** Added, modified and deleted paths, sorted, `/`-separated. */
  changedFiles: string[];
  stats: PatchStats;
}

/** What the harness keeps of a trial's baseline, so it never has to trust the repository again. */
export interface GitBaseline {
  /** Id of the baseline commit (40 hex digits). */
  commit: string;
  /** The text of `.git/config` as the harness wrote it. */
  config: string;
  /**
   * The index right after the baseline commit, kept in memory: capture starts from it (its
   * stat data spares git re-reading unchanged files) instead of the trial's own index.
   */
  index: Uint8Array;
  /** The index file's mtime: git's check for files changed in the same clock tick relies on it. */
  indexMtime: Date;
}

export interface CapturePatchOptions {
  /** Where git writes its scratch files (the patch, a private index); the OS temp by default. */
  tempDir?: string;
  /**
   * The baseline the harness recorded. With it the repository's config is restored and the diff
   * is taken against this commit; without it HEAD and the repository are trusted, which is only
   * right for a repository no untrusted code has run in.
   */
  baseline?: GitBaseline;
  /**
   * Whether the tree may hold paths the baseline does not (default true). False only when the
   * caller's own snapshot of the tree shows none: no file then needs marking intent-to-add, and
   * git is spared a process. A path missed this way is missing from the patch, which the grading
   * copy's check against that snapshot reports.
   */
  addsPaths?: boolean;
}

export interface TrialWorkspace {
  /** The trial's working copy (the agent's cwd). */
  readonly root: string;
  /** `root` with symlinks resolved (e.g. /private/var/… on macOS); same directory. */
  readonly realRoot: string;
  /**
   * A private directory outside the root, for the executor's isolated home and config. It is
   * removed with the workspace.
   */
  readonly scratchDir: string;
  /** Id of the baseline commit, recorded when the workspace was made; patches are taken against it. */
  readonly baselineCommit: string;
  /**
   * The trial's change against the recorded baseline (`capturePatch` with this workspace's
   * baseline, git's scratch files kept outside the root). Call it once the agent and every
   * command it started are done.
   */
  capturePatch(options?: Pick<CapturePatchOptions, "addsPaths">): Promise<CapturedPatch>;
  /**
   * Records the copy's entries (their stat data) as holding `content` (default: the verified
   * fixture), so that `snapshot` reads again only what changed after and `restore` can put the
   * copy back. Only for a copy nothing but the harness has written to since it was verified:
   * code an agent runs outside a seccomp-filtered sandbox can change a file's bytes without
   * changing its stat data (extent-swapping ioctls on ext4 and XFS), so a trial's own copy is
   * always hashed whole.
   */
  remember(content?: TreeSnapshot): Promise<void>;
  /**
   * The copy as it is now (a `trial` snapshot): files whose stat data are still those
   * `remember` recorded, and were recorded after the file clock's tick they last changed in,
   * keep the recorded hashes; every other file is read.
   */
  snapshot(): Promise<TreeSnapshot>;
  /**
   * Puts the copy back to what `remember` recorded, after commands that cannot change a file
   * unseen (`CommandSandbox.changesShowInStat`) ran in it: what they added is removed and the
   * scratch area emptied. False, with nothing removed, when a recorded file or directory changed
   * or nothing was recorded: the caller then makes a fresh copy.
   */
  restore(): Promise<boolean>;
  /** Replaces the root (either spelling) with `<trial-root>` and the temp area with `<trial-temp>`. */
  scrubPaths(text: string): string;
  /** Removes every file of the trial. Safe to call more than once. */
  cleanup(): Promise<void>;
}

export interface CreateTrialWorkspaceOptions {
  /** Parent of the trial's temporary directory; defaults to the OS temp directory. */
  tempParent?: string;
  /**
   * Called with the temporary directory's path before the directory exists, so the caller can
   * record it somewhere a later run will look (a process killed at any point then leaves no
   * directory nobody knows of). If it throws, nothing is created.
   */
  beforeCreate?: (tempDir: string) => Promise<void>;
  /**
   * The fixture as frozen when the run began: the copy must equal it file for file, or the
   * workspace is refused (`fixture-changed`), so a fixture changed mid-run and restored later
   * never reaches a trial or a grader unnoticed.
   */
  expectedFixture?: TreeSnapshot;
  /**
   * The fixture's baseline built once for the run (`BaselineArea.build`): the copy then shares the
   * baseline's read-only objects instead of committing the fixture again, and is made from the
   * copy of the fixture the baseline checked against the frozen snapshot (so a fixture changed
   * mid-run reaches no trial); the workspace is the same to its users.
   */
  baseline?: SharedBaseline;
}

/**
 * A fixture's git baseline, built once and shared by many workspaces: its objects are packed into
 * read-only files that each workspace's `.git` links to, so a trial's repository costs a few links
 * and an index instead of a commit of the whole fixture.
 */
export interface SharedBaseline {
  /** The fixture the baseline holds: the frozen snapshot its copy was checked against. */
  readonly fixture: TreeSnapshot;
  /** Id of the baseline commit (the same commit a private baseline of this fixture gets). */
  readonly commit: string;
}

/** A run's directory of shared baselines, outside every trial and outside --out. */
export interface BaselineArea {
  /** `<temp parent>/harnesslab-baseline-<letters and digits>`. */
  readonly dir: string;
  /**
   * Builds a fixture's baseline here from a copy checked against `expectedFixture`. Throws
   * WorkspaceError (`fixture-*`, `copy-failed`, `git-failed`); nothing of it is left then.
   */
  build(fixtureDir: string, expectedFixture: TreeSnapshot): Promise<SharedBaseline>;
  /**
   * Removes every baseline of the area. Workspaces made from them keep working (their links hold
   * the data), but no more can be made. Safe to call more than once.
   */
  dispose(): Promise<void>;
}

export interface CreateBaselineAreaOptions {
  /** Parent of the area's directory; defaults to the OS temp directory. */
  tempParent?: string;
  /** Called with the area's path before it exists (as for a trial's workspace). */
  beforeCreate?: (dir: string) => Promise<void>;
}

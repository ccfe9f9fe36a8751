import { mkdir, realpath } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkCopy, copyFixture, sameFiles } from "./copy.js";
import { capturePatch, createBaseline } from "./git.js";
import { replaceTrialRoot } from "./paths.js";
import { assertBaselineIntact, materializeBaseline } from "./shared-baseline.js";
import {
  cheapToHash,
  type KnownTree,
  rememberTree,
  restoreKnownTree,
  snapshotTree,
} from "./snapshot.js";
import { createTempDir, removeTree, TRIAL_TEMP_PREFIX } from "./temp.js";
import type {
  CreateTrialWorkspaceOptions,
  GitBaseline,
  SharedBaseline,
  TreeSnapshot,
  TrialWorkspace,
} from "./types.js";
import { WorkspaceError } from "./types.js";
import type { WalkedEntry } from "./walk.js";

/**
 * The run's shared baseline, linked into the copy as it is made. A copy that differs from it is
 * refused with the paths that differ from the frozen fixture, exactly as a private copy's check
 * words it. `checkedByContent`: the copy is checked by hashing it here, and the index is not
 * refreshed (git would hash every file again).
 */
async function sharedRepository(
  root: string,
  home: string,
  hooksDir: string,
  shared: SharedBaseline,
  copying: Promise<WalkedEntry[]>,
  checkedByContent: boolean,
): Promise<GitBaseline> {
  const made = await materializeBaseline(
    shared,
    root,
    home,
    hooksDir,
    copying.then(async (copied) => {
      if (!checkedByContent) return sameFiles(copied, shared.fixture);
      await checkCopy(root, shared.fixture);
      return true;
    }),
    { refresh: !checkedByContent },
  );
  if (made.ok) return made.baseline;
  await checkCopy(root, shared.fixture);
  // Git saw a difference the frozen snapshot does not: the baseline is not what it was built as.
  throw new WorkspaceError(
    "git-failed",
    "the copy matches the frozen fixture but not the run's shared baseline of it",
    { refresh: made.output },
  );
}

/**
 * A fresh copy of the fixture with a git baseline, in its own temporary directory:
 *
 *     <temp>/trial    the working copy (the agent's cwd), a repository with one commit
 *     <temp>/scratch  the executor's isolated home/config, also git's HOME
 *     <temp>/hooks    empty; core.hooksPath points here so no hook ever runs
 *
 * The baseline commit id and the repository's config are kept in memory: `capturePatch` restores
 * the config and diffs against that commit, whatever the trial did to its repository. With
 * `options.baseline` the commit is the run's shared one, whose packs the repository links to;
 * without it the copy is committed here. Either way the copy is checked against the frozen
 * fixture first.
 *
 * Throws WorkspaceError (`fixture-*`, `copy-failed`, `git-failed`); nothing is left behind then.
 */
export async function createTrialWorkspace(
  fixtureDir: string,
  options: CreateTrialWorkspaceOptions = {},
): Promise<TrialWorkspace> {
  const shared = options.baseline;
  if (shared && options.expectedFixture && options.expectedFixture.hash !== shared.fixture.hash)
    throw new Error(
      "createTrialWorkspace: the shared baseline holds another fixture than expected",
    );
  const tempDir = await createTempDir(
    options.tempParent ?? tmpdir(),
    TRIAL_TEMP_PREFIX,
    options.beforeCreate,
  );
  const root = join(tempDir, "trial");
  const scratchDir = join(tempDir, "scratch");
  const hooksDir = join(tempDir, "hooks");
  // The content the copy is to hold: the shared baseline's fixture, or the one it is checked
  // against.
  const verified = shared?.fixture ?? options.expectedFixture;
  try {
    const copying = Promise.all([
      mkdir(scratchDir),
      mkdir(hooksDir),
      copyFixture(fixtureDir, root),
    ]).then(([, , copied]) => copied);
    // Hashing a small copy here spares a git process; on a large one git's refresh is faster,
    // and the stat data it keeps spare the capture reading every file again.
    const checkedByContent = shared !== undefined && cheapToHash(shared.fixture);
    const baseline = shared
      ? await sharedRepository(root, scratchDir, hooksDir, shared, copying, checkedByContent)
      : await copying.then(async () => {
          if (verified !== undefined) await checkCopy(root, verified);
          return createBaseline(root, scratchDir, hooksDir);
        });
    const [realRoot, realTemp] = await Promise.all([realpath(root), realpath(tempDir)]);
    let removed: Promise<void> | undefined;
    let known: KnownTree | undefined;
    return {
      root,
      realRoot,
      scratchDir,
      baselineCommit: baseline.commit,
      remember: async (content = verified) => {
        known = content === undefined ? undefined : await rememberTree(root, content, tempDir);
      },
      restore: async () => {
        if (known === undefined || !(await restoreKnownTree(root, known))) return false;
        // The next command starts with an empty scratch area too, as on a fresh copy; one that
        // cannot be emptied (a grader's code left a directory it cannot be read in) is not used.
        try {
          await removeTree(scratchDir);
          await mkdir(scratchDir);
          return true;
        } catch {
          return false;
        }
      },
      snapshot: () => snapshotTree(root, { mode: "trial", ...(known ? { known } : {}) }),
      // The temp directory itself, not the scratch dir the executor (and so the agent) writes in.
      capturePatch: async (capture = {}) => {
        try {
          return await capturePatch(root, { ...capture, tempDir, baseline });
        } finally {
          // Git has just read the baseline through the trial's links to the shared packs: they
          // must still hold what the baseline wrote (and if they do not, that is why git failed).
          if (shared) await assertBaselineIntact(shared, join(root, ".git", "objects", "pack"));
        }
      },
      scrubPaths: (text) =>
        replaceTrialRoot(
          replaceTrialRoot(text, [root, realRoot]),
          [tempDir, realTemp],
          "<trial-temp>",
        ),
      cleanup: () => {
        removed ??= removeTree(tempDir);
        return removed;
      },
    };
  } catch (error) {
    await removeTree(tempDir).catch(() => {});
    throw error;
  }
}

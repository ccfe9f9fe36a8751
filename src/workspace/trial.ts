import { mkdirSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkCopy, copyFixture } from "./copy.js";
import { capturePatch, createBaseline } from "./git.js";
import { replaceTrialRoot } from "./paths.js";
import { assertBaselineIntact, materializeBaseline } from "./shared-baseline.js";
import { type KnownTree, rememberTree, restoreKnownTree, snapshotTree } from "./snapshot.js";
import { createTempDir, removeTree, TRIAL_TEMP_PREFIX } from "./temp.js";
import type { CreateTrialWorkspaceOptions, GitBaseline, TrialWorkspace } from "./types.js";

/**
 * A fresh copy of the fixture with a git baseline, in its own temporary directory:
 *
 *     <temp>/trial    the working copy (the agent's cwd), a repository with one commit
 *     <temp>/scratch  the executor's isolated home/config, also git's HOME
 *     <temp>/hooks    empty; core.hooksPath points here so no hook ever runs
 *
 * The baseline commit id and the repository's config are kept in memory: `capturePatch` restores
 * the config and diffs against that commit, whatever the trial did to its repository. With
 * `options.baseline` the commit is the run's shared one, whose packs the repository links to, and
 * the copy is made from the run's own checked copy of the fixture (`fixtureDir` is not read);
 * without it `fixtureDir` is copied, checked against `options.expectedFixture` and committed
 * here.
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
    mkdirSync(scratchDir);
    mkdirSync(hooksDir);
    let copied: KnownTree | undefined;
    let baseline: GitBaseline;
    if (shared) {
      const made = await materializeBaseline(shared, root, hooksDir, tempDir);
      baseline = made.baseline;
      copied = made.known;
    } else {
      await copyFixture(fixtureDir, root);
      if (verified !== undefined) await checkCopy(root, verified);
      baseline = await createBaseline(root, scratchDir, hooksDir);
    }
    const realRoot = realpathSync(root);
    const realTemp = realpathSync(tempDir);
    let removed: Promise<void> | undefined;
    let known: KnownTree | undefined;
    return {
      root,
      realRoot,
      scratchDir,
      baselineCommit: baseline.commit,
      remember: async (content) => {
        // The copy's own record serves as long as it is the fixture that is remembered: any
        // change since moved the stat data it keeps.
        if (content === undefined && copied !== undefined) known = copied;
        else {
          const holding = content ?? verified;
          known = holding === undefined ? undefined : await rememberTree(root, holding, tempDir);
        }
      },
      restore: async () => {
        if (known === undefined || !(await restoreKnownTree(root, known))) return false;
        // The next command starts with an empty scratch area too, as on a fresh copy; one that
        // cannot be emptied (a grader's code left a directory it cannot be read in) is not used.
        try {
          await removeTree(scratchDir);
          mkdirSync(scratchDir);
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

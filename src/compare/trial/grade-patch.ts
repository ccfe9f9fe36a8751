// The one grading path of run and regrade: a trial is graded from its captured patch, applied to
// a fresh copy of the frozen fixture, by graders whose commands run contained, after the agent
// and everything it started are gone. Nothing the trial left in its own workspace (a daemon, a
// file git was told to ignore, a FIFO, a fixture changed and restored) can reach a grade.

import type { TrialInfraReason } from "../../artifacts/index.js";
import type { Grade, GradeCheck } from "../../graders/index.js";
import type { CommandSandbox } from "../../sandbox/index.js";
import type { RepoState } from "../../scoring/index.js";
import {
  applyPatch,
  cheapToHash,
  createTrialWorkspace,
  isDiskFull,
  isWorkspaceError,
  type SharedBaseline,
  type TreeSnapshot,
  type TrialWorkspace,
  treeDifferences,
  watchDiskUse,
} from "../../workspace/index.js";
import type { TaskSpec } from "../experiment.js";
import { gradeInfrastructureProblem, type PreparedGrader } from "./graders.js";

/** The grader id of the harness's own checks on a trial's change, before any task grader. */
const INTEGRITY_GRADER = "integrity";

/** A failed integrity check: the trial's change cannot be graded, and that is the trial's doing. */
export function integrityGrade(check: string, detail: string, evidence?: unknown): Grade {
  const failed: GradeCheck = {
    id: check,
    weight: 1,
    passed: false,
    detail,
    ...(evidence === undefined ? {} : { evidence }),
  };
  return { grader: INTEGRITY_GRADER, checks: [failed], score: 0, passed: false };
}

export interface GradePatchInput {
  task: TaskSpec;
  graders: readonly PreparedGrader[];
  /** The fixture as frozen when the run began; the grading copy must equal it. */
  fixtureSnapshot: TreeSnapshot;
  /** The trial's patch (empty: no change). */
  patch: Uint8Array;
  changedFiles: string[];
  finalText: string;
  /** Forge tasks: the repository's state after the agent (what forge-state grades). */
  forgeState?: RepoState;
  sandbox: CommandSandbox;
  /** The task's baseline the run shares, which each grading copy links instead of committing. */
  baseline?: SharedBaseline;
  tempParent?: string;
  /** Notes the grading workspace's directory before it exists (for --resume to clean up). */
  beforeCreate: (tempDir: string) => Promise<void>;
  /**
   * The trial's final tree (run only): the patched copy must reproduce it, or the change holds
   * something a patch cannot carry and the trial fails its integrity check.
   */
  expectedTree?: TreeSnapshot;
  signal?: AbortSignal;
  /** The most bytes a grading copy may take on disk while its grader runs (none: no limit). */
  diskBudgetBytes?: number;
  /** Told how long each step took (`npm run bench -- repo-scale` prints where the time goes). */
  onStep?: (step: GradingStep, ms: number) => void;
}

/** The steps of grading a patch, as `onStep` names them. */
export type GradingStep = "copy" | "apply" | "reproduce" | "restore" | "grade" | "cleanup";

export interface GradePatchResult {
  grades: Grade[];
  /** A harness step or a grader broke: the trial's infrastructure error. */
  harnessFailure?: { reason: TrialInfraReason; message: string };
  /** Replaces the grading workspace's paths with placeholders (identity once it is gone). */
  scrubPaths: (text: string) => string;
}

/**
 * Grades one trial's patch on fresh, verified copies of the fixture; removes each copy after.
 * Every grader that reads the copy starts from the fixture with the patch and nothing else: a
 * grader that runs the trial's code (`npm test` imports it) runs it with the copy writable, and
 * that code could otherwise rewrite what the next grader reads (its script, the tests) and pass a
 * change that fixes nothing. The copy is put back for the next grader when its stat data show
 * that nothing recorded changed (only where the sandbox makes stat data evidence), and made anew
 * otherwise. The graders that read no file (scope, forge state, read facts) go first, on the
 * first copy, which they leave as it was. Grades come back in the task's order.
 */
export async function gradePatch(input: GradePatchInput): Promise<GradePatchResult> {
  const copies: TrialWorkspace[] = [];
  let running: string | undefined;
  /** The harness's own integrity checks, before every grader's. */
  const integrity: Grade[] = [];
  const graded: Array<{ index: number; grade: Grade }> = [];
  const result = (fields: Partial<GradePatchResult>): GradePatchResult => {
    const scrubbers = copies.map((copy) => copy.scrubPaths);
    const scrub = (text: string) => scrubbers.reduce((out, scrubPaths) => scrubPaths(out), text);
    const grades = [
      ...integrity,
      ...graded.sort((a, b) => a.index - b.index).map((entry) => entry.grade),
    ];
    return { grades, scrubPaths: scrub, ...fields };
  };
  /** Runs one step, telling `onStep` how long it took. */
  const timed = async <T>(step: GradingStep, work: () => Promise<T>): Promise<T> => {
    if (input.onStep === undefined) return work();
    const started = performance.now();
    try {
      return await work();
    } finally {
      input.onStep(step, performance.now() - started);
    }
  };
  /**
   * A copy that each grader running code can be given again, put back by its stat data after the
   * grader instead of made anew: only where the sandbox lets no command change a file unseen.
   */
  const reusable =
    input.sandbox.changesShowInStat && input.graders.filter((g) => g.usesCopy).length > 1;
  /**
   * A fresh copy of the fixture with the patch applied and, when `known`, its tree after the
   * patch (read again only where the patch changed it) and remembered as such; or why there is
   * no copy.
   */
  const patchedCopy = async (
    known: boolean,
  ): Promise<{ workspace: TrialWorkspace; tree?: TreeSnapshot } | GradePatchResult> => {
    let workspace: TrialWorkspace;
    try {
      workspace = await timed("copy", () =>
        createTrialWorkspace(input.task.fixtureDir, {
          ...(input.tempParent ? { tempParent: input.tempParent } : {}),
          beforeCreate: input.beforeCreate,
          expectedFixture: input.fixtureSnapshot,
          ...(input.baseline ? { baseline: input.baseline } : {}),
        }),
      );
    } catch (error) {
      const changed = isWorkspaceError(error) && error.code === "fixture-changed";
      return result({
        harnessFailure: {
          reason: isDiskFull(error)
            ? "disk_full"
            : changed
              ? "fixture_changed"
              : "fixture_copy_failed",
          message: `cannot prepare the grading copy: ${(error as Error).message}`,
        },
      });
    }
    copies.push(workspace);
    // Remembered, the fixture's files are not read again after the patch; a small fixture costs
    // no more to read again than to record.
    const rememberedFixture = known && !cheapToHash(input.fixtureSnapshot);
    if (rememberedFixture) await timed("reproduce", () => workspace.remember());
    if (input.patch.length > 0) {
      const applied = await timed("apply", () => applyPatch(workspace.root, input.patch));
      if (!applied.ok) return unappliable(applied.message);
    }
    if (!known) return { workspace };
    const tree = await timed("reproduce", () => workspace.snapshot());
    // An empty patch leaves the remembered fixture as it was.
    if (reusable && (input.patch.length > 0 || !rememberedFixture))
      await timed("restore", () => workspace.remember(tree));
    return { workspace, tree };
  };
  /** A patch captured from this very fixture always applies; why this one did not. */
  const unappliable = (message: string): GradePatchResult => {
    // Made unappliable by what the trial wrote (run), or the recording was damaged (regrade).
    if (input.expectedTree !== undefined && copies.length === 1) {
      integrity.push(
        integrityGrade(
          "patch-applies",
          `the trial's patch does not apply to a fresh copy of the fixture: ${message}`,
        ),
      );
      return result({});
    }
    return result({
      harnessFailure: {
        reason: "grader_failed",
        message: `the recorded patch does not apply: ${message}`,
      },
    });
  };
  try {
    const first = await patchedCopy(input.expectedTree !== undefined || reusable);
    if (!("workspace" in first)) return first;
    if (input.expectedTree !== undefined && first.tree !== undefined) {
      const differing = treeDifferences(input.expectedTree, first.tree);
      if (differing.length > 0) {
        integrity.push(
          integrityGrade(
            "patch-reproduces",
            `the trial's change cannot be expressed as a patch: ${differing.slice(0, 10).join(", ")}${differing.length > 10 ? `, … (${differing.length} paths)` : ""} differ between the trial and the fixture with its patch applied`,
            { paths: differing.slice(0, 100) },
          ),
        );
        return result({});
      }
    }
    const indexed = [...input.graders.entries()];
    const order = [
      ...indexed.filter(([, g]) => !g.usesCopy),
      ...indexed.filter(([, g]) => g.usesCopy),
    ];
    let copy = first.workspace;
    let copyUsed = false;
    /**
     * Whether the last grader's sandbox ended a command before it exited (its timeout, an abort):
     * the sandbox's processes then die after the call returns, and the copy is not put back.
     */
    let lastCutShort = false;
    for (const [index, prepared] of order) {
      running = prepared.id;
      if (prepared.usesCopy && copyUsed) {
        // The previous grader ran the trial's code in the copy: put it back, or make another
        // (only one copy is on disk at a time).
        const restored =
          reusable && !lastCutShort && (await timed("restore", () => copy.restore()));
        if (!restored) {
          // One that cannot be removed now is tried again at the end; the next grader needs none.
          await timed("cleanup", async () => copy.cleanup().catch(() => {}));
          const fresh = await patchedCopy(reusable);
          if (!("workspace" in fresh)) return fresh;
          copy = fresh.workspace;
        }
      }
      if (prepared.usesCopy) copyUsed = true;
      const outcome = await timed("grade", () => gradeWithinBudget(prepared, copy, input));
      lastCutShort = outcome.cutShort;
      if ("overBudget" in outcome) {
        graded.push({ index, grade: outcome.overBudget });
        return result({});
      }
      const grade = outcome.grade;
      graded.push({ index, grade });
      const problem = gradeInfrastructureProblem(prepared, grade);
      if (problem !== null)
        return result({
          harnessFailure: { reason: "grader_failed", message: `grader ${prepared.id}: ${problem}` },
        });
    }
    return result({});
  } catch (error) {
    const message = `${running === undefined ? "" : `grader ${running}: `}${error instanceof Error ? error.message : String(error)}`;
    return result({
      harnessFailure: {
        reason: input.signal?.aborted
          ? "run_aborted"
          : isDiskFull(error)
            ? "disk_full"
            : "grader_failed",
        message,
      },
    });
  } finally {
    await timed("cleanup", () => Promise.all(copies.map((copy) => copy.cleanup().catch(() => {}))));
  }
}

/**
 * One grader on its copy (see `gradeOnCopy`), and whether its sandbox cut a command short: the
 * grader is given the sandbox through a wrapper that notes it.
 */
async function gradeWithinBudget(
  prepared: PreparedGrader,
  copy: TrialWorkspace,
  input: GradePatchInput,
): Promise<({ grade: Grade } | { overBudget: Grade }) & { cutShort: boolean }> {
  let cutShort = false;
  const sandbox: CommandSandbox = {
    ...input.sandbox,
    run: async (argv, options) => {
      const result = await input.sandbox.run(argv, options);
      if (result.timedOut || result.aborted) cutShort = true;
      return result;
    },
    // A command the grader starts itself may outlive the grade: nothing can be said of the copy.
    wrap: (argv, options) => {
      cutShort = true;
      return input.sandbox.wrap(argv, options);
    },
  };
  const outcome = await gradeOnCopy(prepared, copy, input, sandbox);
  return { ...outcome, cutShort };
}

/**
 * One grader on its copy, stopped when the copy goes over the disk budget: the trial's code the
 * grader runs (an `npm test`) wrote it, so that is a failed grade of the trial's.
 */
async function gradeOnCopy(
  prepared: PreparedGrader,
  copy: TrialWorkspace,
  input: GradePatchInput,
  sandbox: CommandSandbox,
): Promise<{ grade: Grade } | { overBudget: Grade }> {
  const stop = new AbortController();
  const signal = input.signal ? AbortSignal.any([input.signal, stop.signal]) : stop.signal;
  let overBudget: number | undefined;
  const budget = input.diskBudgetBytes;
  const watch =
    budget === undefined
      ? undefined
      : watchDiskUse({
          roots: () => [copy.root],
          budgetBytes: budget,
          onExceeded: (bytes) => {
            overBudget = bytes;
            stop.abort(new Error("the grading copy went over its disk budget"));
          },
        });
  const overGrade = (bytes: number): { overBudget: Grade } => ({
    overBudget: {
      grader: prepared.id,
      checks: [
        {
          id: "disk-budget",
          weight: 1,
          passed: false,
          detail: `disk budget exceeded: the grading copy took ${Math.ceil(bytes / 1048576)} MiB on disk while ${prepared.id} ran the trial's code, over its budget of ${Math.ceil((budget ?? 0) / 1048576)} MiB (diskBudgetMB); it was stopped`,
          evidence: { bytes, budgetBytes: budget },
        },
      ],
      score: 0,
      passed: false,
    },
  });
  try {
    const grade = await prepared.grader.grade({
      trialRoot: copy.root,
      changedFiles: input.changedFiles,
      expectedFiles: input.task.expectedFiles,
      finalText: input.finalText,
      ...(input.forgeState === undefined ? {} : { forgeState: input.forgeState }),
      scratchDir: copy.scratchDir,
      sandbox,
      signal,
    });
    return overBudget === undefined ? { grade } : overGrade(overBudget);
  } catch (error) {
    if (overBudget !== undefined && !input.signal?.aborted) return overGrade(overBudget);
    throw error;
  } finally {
    await watch?.stop();
  }
}

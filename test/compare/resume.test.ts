// Interrupted runs resume: an aborted run keeps its finished trials, `resume: true` runs only
// the missing ones, and the final verdict has the same statistics as an uninterrupted run.
import { access, readdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ExperimentInputError,
  type RunProgress,
  trialArtifactDir,
  type VerdictDocument,
} from "../../src/compare/index.js";
import { type Executor, ScriptedExecutor } from "../../src/exec/index.js";
import { listTree } from "../fixtures/manifests/workspace.js";
import {
  loadForRun,
  makeExperiment,
  recordingExecutor,
  runManifest,
  syntheticManifest,
  type TempExperiment,
} from "../support/experiment.js";

let exp: TempExperiment;
let full: VerdictDocument;

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

/** What must not depend on how the run was split: everything but wall-clock measurements. */
function comparable(verdict: VerdictDocument) {
  const stats = verdict.statistics!;
  const withoutDuration = <T extends { duration?: unknown }>(x: T) => ({ ...x, duration: null });
  return {
    status: verdict.status,
    reason: verdict.reason,
    comparisons: stats.comparisons,
    variants: stats.aggregates.variants.map(withoutDuration),
    cells: stats.aggregates.cells.map(withoutDuration),
    trials: verdict.trials.map((t) => ({
      seq: t.seq,
      variant: t.variant,
      trial: t.trial,
      outcome: t.outcome,
      score: t.score,
      changedFiles: t.changedFiles,
    })),
  };
}

async function finishedTrials(
  outDir: string,
  verdictLike: { trials: Array<{ artifactDir: string }> },
) {
  const finished: string[] = [];
  for (const t of verdictLike.trials)
    if (await exists(join(outDir, t.artifactDir, "metrics.json"))) finished.push(t.artifactDir);
  return finished;
}

beforeAll(async () => {
  exp = await makeExperiment({
    manifest: syntheticManifest({
      trials: { count: 3, seed: 11, order: "randomized" },
      concurrency: 1,
    }),
  });
  ({ verdict: full } = await runManifest(exp.manifestPath, {
    outDir: exp.freshOut("full"),
    tempParent: exp.trialsDir,
  }));
  expect(full.status).toBe("accept");
});

afterAll(() => exp.cleanup());

describe("resume", () => {
  it("finishes an aborted run by running only the missing trials, with the full run's statistics", async () => {
    const outDir = exp.freshOut("aborted-between-trials");
    const controller = new AbortController();
    const firstCalls: string[] = [];
    const { verdict: interrupted } = await runManifest(exp.manifestPath, {
      outDir,
      tempParent: exp.trialsDir,
      signal: controller.signal,
      executorFor: () => recordingExecutor(new ScriptedExecutor(), firstCalls),
      onProgress: (p: RunProgress) => {
        if (p.done === 2) controller.abort();
      },
    });
    expect(firstCalls).toHaveLength(2);
    expect(interrupted.status).toBe("infrastructure_error");
    expect(interrupted.reason).toContain("interrupted after 2 of 6 trials");
    expect(interrupted.trials).toHaveLength(2);

    const resumedCalls: string[] = [];
    const progress: RunProgress[] = [];
    const { verdict: resumed, experiment } = await runManifest(exp.manifestPath, {
      outDir,
      tempParent: exp.trialsDir,
      resume: true,
      executorFor: () => recordingExecutor(new ScriptedExecutor(), resumedCalls),
      onProgress: (p) => progress.push(p),
    });
    expect(resumedCalls).toHaveLength(4);
    expect(resumedCalls.filter((c) => firstCalls.includes(c))).toEqual([]);
    expect(progress[0]).toMatchObject({ done: 2, reused: 2, total: 6 });
    expect(comparable(resumed)).toEqual(comparable(full));
    for (const t of resumed.trials)
      expect(t.artifactDir).toBe(trialArtifactDir(experiment, t.variant, t.task, t.trial));
  });

  it("runs again a trial the abort interrupted in flight, and never keeps its partial result", async () => {
    const outDir = exp.freshOut("aborted-in-flight");
    const controller = new AbortController();
    const inner = new ScriptedExecutor();
    let runs = 0;
    // Two lanes; the third trial to start pulls the plug while its own workspace is ready.
    const interrupting: Executor = {
      host: "scripted",
      run(input) {
        runs += 1;
        if (runs === 3) controller.abort();
        return inner.run(input);
      },
    };
    const { verdict: interrupted } = await runManifest(exp.manifestPath, {
      outDir,
      tempParent: exp.trialsDir,
      signal: controller.signal,
      concurrency: 2,
      executorFor: () => interrupting,
    });
    expect(interrupted.status).toBe("infrastructure_error");
    expect(interrupted.trials.every((t) => t.infraReason !== "run_aborted")).toBe(true);
    const finished = await finishedTrials(outDir, interrupted);
    expect(finished.sort()).toEqual(interrupted.trials.map((t) => t.artifactDir).sort());
    // The trial that freed the lane finished; the other lane's trial may have been cut short.
    expect(finished.length).toBeGreaterThanOrEqual(1);
    expect(finished.length).toBeLessThan(6);
    expect(await readdir(exp.trialsDir)).toEqual([]);

    const resumedCalls: string[] = [];
    const { verdict: resumed } = await runManifest(exp.manifestPath, {
      outDir,
      tempParent: exp.trialsDir,
      resume: true,
      executorFor: () => recordingExecutor(new ScriptedExecutor(), resumedCalls),
    });
    expect(resumedCalls).toHaveLength(6 - finished.length);
    expect(comparable(resumed)).toEqual(comparable(full));
  });

  it("re-runs nothing when resuming a finished run", async () => {
    const outDir = exp.freshOut("finished");
    await runManifest(exp.manifestPath, { outDir, tempParent: exp.trialsDir });
    const calls: string[] = [];
    const { verdict } = await runManifest(exp.manifestPath, {
      outDir,
      tempParent: exp.trialsDir,
      resume: true,
      executorFor: () => recordingExecutor(new ScriptedExecutor(), calls),
    });
    expect(calls).toEqual([]);
    expect(comparable(verdict)).toEqual(comparable(full));
  });

  it("refuses to resume with a different manifest or trial count, and changes nothing", async () => {
    const outDir = exp.freshOut("refused");
    const controller = new AbortController();
    await runManifest(exp.manifestPath, {
      outDir,
      tempParent: exp.trialsDir,
      signal: controller.signal,
      onProgress: (p) => {
        if (p.done === 1) controller.abort();
      },
    });
    const before = await listTree(outDir);
    const other = await exp.writeManifest(
      syntheticManifest({ trials: { count: 3, seed: 12, order: "randomized" }, concurrency: 1 }),
      "other.json",
    );
    const attempt = (manifestPath: string, trials?: number) =>
      runManifest(manifestPath, {
        outDir,
        tempParent: exp.trialsDir,
        resume: true,
        ...(trials === undefined ? {} : { trials }),
      });
    await expect(attempt(other)).rejects.toThrow(ExperimentInputError);
    await expect(attempt(other)).rejects.toThrow(/different inputs/);
    await expect(attempt(exp.manifestPath, 2)).rejects.toThrow(/trial count/);
    expect(await listTree(outDir)).toEqual(before);
    // The same experiment still resumes.
    const { experiment } = await loadForRun(exp.manifestPath);
    const { verdict } = await runManifest(exp.manifestPath, {
      outDir,
      tempParent: exp.trialsDir,
      resume: true,
    });
    expect(verdict.trials).toHaveLength(experiment.trials.count * 2);
  });
});

// Per-trial harness overhead of the comparison runner with the `nop` agent and no graders,
// divided by a baseline measured in the same run: the same tree handled by plain child
// processes (`cp -r`, `git init`, `git add -A`, `git commit`, `git diff`). Measured for one
// trial through `runTrial` (workspace, policy, executor, patch, artifacts, cleanup) and per
// trial of a whole `runExperiment` (which also snapshots the fixture before and after, writes
// the run files and the verdict). Goal: ratio <= 1.5 on the example fixture and on a
// generated 5,000-file / 50 MB fixture.
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createRunKey, defaultStateDir } from "../src/compare/evidence/record-seal.js";
import {
  assembleExperiment,
  type Experiment,
  loadHarnessCatalog,
  loadManifest,
  runExperiment,
} from "../src/compare/index.js";
import { sealTrial } from "../src/compare/run/runner.js";
import { runTrial } from "../src/compare/trial/trial.js";
import { ScriptedExecutor } from "../src/exec/index.js";
import { snapshotTree } from "../src/workspace/index.js";
import { testSandbox } from "../test/support/sandbox.js";
import { baselineTrial, largeFixture, median } from "./workspace.bench.js";

const GOAL = 1.5;
const EXAMPLE = fileURLToPath(new URL("../examples/fix-the-bug/", import.meta.url));

/** The example experiment pointed at `fixtureDir`, with nop agents and no graders. */
async function nopExperiment(fixtureDir: string, trials: number): Promise<Experiment> {
  const loaded = await loadManifest(join(EXAMPLE, "experiment.json"), {
    trialsOverride: 1,
    loadCatalog: loadHarnessCatalog,
  });
  if (!loaded.ok) throw new Error(loaded.problems.map((p) => p.message).join("; "));
  const experiment = loaded.experiment;
  return {
    ...experiment,
    tasks: experiment.tasks.map((task) => ({ ...task, fixtureDir, graders: [] })),
    variants: experiment.variants.map((variant) => ({ ...variant, agent: { kind: "nop" } })),
    trials: { ...experiment.trials, count: trials, manifestCount: trials },
    concurrency: 1,
  };
}

async function harnessTrial(
  experiment: Experiment,
  outDir: string,
  index: number,
): Promise<number> {
  const assembled = await assembleExperiment(experiment);
  if (!assembled.ok) throw new Error("the example does not assemble");
  const task = experiment.tasks[0]!;
  const variant = experiment.variants[0]!;
  const executor = new ScriptedExecutor({ secretValues: [] });
  // Taken once per run by the runner, not per trial.
  const fixtureSnapshot = await snapshotTree(task.fixtureDir);
  const started = performance.now();
  const artifactDir = join(outDir, `trial-${index}`);
  const unsealed = await runTrial({
    experiment,
    fixtureSnapshot,
    task,
    variant,
    assembled: assembled.variants.get(variant.id)!,
    graders: [],
    executor,
    job: { seq: index, task: task.id, variant: variant.id, trialIndex: index },
    artifactDir,
    secretValues: [],
    sandbox: await testSandbox(),
  });
  // Sealed as the runner seals every trial.
  const metrics = await sealTrial(artifactDir, unsealed, await createRunKey(defaultStateDir()));
  const elapsed = performance.now() - started;
  if (metrics.outcome === "infrastructure_error" || metrics.changedFiles.length > 0)
    throw new Error(`nop trial went wrong: ${metrics.explanation}`);
  return elapsed;
}

/** Runs `experiment` with scripted agents; ms per trial (an infrastructure error throws). */
export async function experimentPerTrial(experiment: Experiment, outDir: string): Promise<number> {
  const started = performance.now();
  const { verdict } = await runExperiment(experiment, {
    outDir,
    manifestDocument: {},
    manifestHash: "0".repeat(64),
    executorFor: () => new ScriptedExecutor({ secretValues: [] }),
    env: {},
  });
  const elapsed = performance.now() - started;
  if (verdict.trials.some((t) => t.outcome === "infrastructure_error"))
    throw new Error("a nop trial of the experiment failed");
  return elapsed / verdict.trials.length;
}

interface Row {
  name: string;
  files: number;
  mb: number;
  experimentTrials: number;
  /** Per path: median baseline, median harness time per trial, median of the per-round ratios. */
  paths: Array<{ path: string; baseline: number; harness: number; ratio: number }>;
}

/**
 * Rounds of: baseline, one runTrial, baseline, one small runExperiment. Each harness sample is
 * divided by the baseline taken just before it, so the ratio holds even when the machine's load
 * drifts during the benchmark (it does on shared CI runners).
 */
async function measure(
  name: string,
  fixture: string,
  rounds: number,
  experimentTrials: number,
): Promise<Row> {
  const snapshot = await snapshotTree(fixture);
  const out = await mkdtemp(join(tmpdir(), "hl-bench-trial-out-"));
  try {
    const single = await nopExperiment(fixture, 1);
    // Each variant runs `experimentTrials / 2` trials, one at a time.
    const whole = await nopExperiment(fixture, Math.max(1, Math.floor(experimentTrials / 2)));
    // Warm the page cache, git and module loading on both sides before timing.
    await baselineTrial(fixture);
    await harnessTrial(single, out, 0);
    const samples = {
      trial: { baseline: [] as number[], harness: [] as number[], ratio: [] as number[] },
      experiment: { baseline: [] as number[], harness: [] as number[], ratio: [] as number[] },
    };
    for (let round = 1; round <= rounds; round++) {
      for (const kind of ["trial", "experiment"] as const) {
        const baseline = await baselineTrial(fixture);
        const harness =
          kind === "trial"
            ? await harnessTrial(single, out, round)
            : await experimentPerTrial(whole, join(out, `experiment-${round}`));
        samples[kind].baseline.push(baseline);
        samples[kind].harness.push(harness);
        samples[kind].ratio.push(harness / baseline);
      }
    }
    const summary = (path: string, s: (typeof samples)["trial"]) => ({
      path,
      baseline: median(s.baseline),
      harness: median(s.harness),
      ratio: median(s.ratio),
    });
    const experimentRuns = whole.trials.count * whole.variants.length;
    return {
      name,
      files: snapshot.files.filter((f) => f.kind === "file").length,
      mb: snapshot.files.reduce((sum, f) => sum + f.bytes, 0) / 1e6,
      experimentTrials: experimentRuns,
      paths: [
        summary("runTrial", samples.trial),
        summary(`runExperiment (${experimentRuns} trials, per trial)`, samples.experiment),
      ],
    };
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}

export async function run(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "hl-bench-trial-"));
  try {
    // The small fixture first: writing back the large one would otherwise disturb its timings.
    const rows = [await measure("examples/fix-the-bug", join(EXAMPLE, "fixture"), 15, 4)];
    const large = join(dir, "large");
    await mkdir(large);
    await largeFixture(large, 5000, 50_000_000);
    rows.push(await measure("5,000 files / 50 MB", large, 3, 2));
    console.log(
      "| fixture | files | MB | path (nop agent, no graders) | baseline ms (cp -r + git init/add/commit/diff) | harness ms per trial | ratio (median per round) | goal |",
    );
    console.log("|---|---:|---:|---|---:|---:|---:|---|");
    for (const r of rows) {
      for (const p of r.paths) {
        console.log(
          `| ${r.name} | ${r.files} | ${r.mb.toFixed(1)} | ${p.path} | ${p.baseline.toFixed(1)} | ${p.harness.toFixed(1)} | ${p.ratio.toFixed(2)} | ${p.ratio <= GOAL ? "ok" : "MISSED"} (<= ${GOAL}) |`,
        );
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

// The forge suite offline (examples/forge-suite/experiment.json: 20 tasks × the oracle through
// MCP and through curl, 40 trials at the manifest's concurrency) against a baseline measured in
// the same run: the same number of trials of a file task with the `nop` agent and no graders
// (examples/fix-the-bug's fixture), i.e. what a trial costs before any forge exists. The ratio
// is what a forge trial adds (a local forge seeded per trial, the MCP server or the gateway, an
// agent's 1-5 forge calls in the sandbox, the capture and the grading). Goal: the whole suite to
// a verdict in under a minute on two cores.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Experiment, loadHarnessCatalog, loadManifest } from "../src/compare/index.js";
import { experimentPerTrial } from "./trial.bench.js";
import { median } from "./workspace.bench.js";

const SUITE = fileURLToPath(new URL("../examples/forge-suite/experiment.json", import.meta.url));
const FILE_EXAMPLE = fileURLToPath(
  new URL("../examples/fix-the-bug/experiment.json", import.meta.url),
);
const GOAL_MS = 60_000;

async function load(path: string): Promise<Experiment> {
  const loaded = await loadManifest(path, { loadCatalog: loadHarnessCatalog });
  if (!loaded.ok) throw new Error(loaded.problems.map((p) => p.message).join("; "));
  return loaded.experiment;
}

/** The file example with nop agents and no graders, `trials` trials in all at `concurrency`. */
async function nopFileExperiment(trials: number, concurrency: number): Promise<Experiment> {
  const experiment = await load(FILE_EXAMPLE);
  const perVariant = Math.max(1, Math.round(trials / experiment.variants.length));
  return {
    ...experiment,
    tasks: experiment.tasks.map((task) => ({ ...task, graders: [] })),
    variants: experiment.variants.map((variant) => ({ ...variant, agent: { kind: "nop" } })),
    trials: { ...experiment.trials, count: perVariant, manifestCount: perVariant },
    concurrency,
  };
}

export async function run(): Promise<void> {
  const out = await mkdtemp(join(tmpdir(), "hl-bench-forge-suite-"));
  try {
    const suite = await load(SUITE);
    const trials = suite.tasks.length * suite.variants.length * suite.trials.count;
    const baseline = await nopFileExperiment(trials, suite.concurrency);
    // Warm module loading, the sandbox and git on both sides before timing.
    await experimentPerTrial(baseline, join(out, "warm-file"));
    await experimentPerTrial(suite, join(out, "warm-forge"));
    const rounds = 3;
    const samples = { file: [] as number[], forge: [] as number[], ratio: [] as number[] };
    for (let round = 1; round <= rounds; round++) {
      const file = await experimentPerTrial(baseline, join(out, `file-${round}`));
      const forge = await experimentPerTrial(suite, join(out, `forge-${round}`));
      samples.file.push(file);
      samples.forge.push(forge * trials);
      samples.ratio.push(forge / file);
    }
    const whole = median(samples.forge);
    console.log(
      `| run (${trials} trials, concurrency ${suite.concurrency}) | baseline ms per trial (file task, nop, no graders) | forge suite ms per trial | ratio (median per round) | suite to a verdict, ms | goal |`,
    );
    console.log("|---|---:|---:|---:|---:|---|");
    console.log(
      `| examples/forge-suite | ${median(samples.file).toFixed(1)} | ${(whole / trials).toFixed(1)} | ${median(samples.ratio).toFixed(2)} | ${whole.toFixed(0)} | ${whole <= GOAL_MS ? "ok" : "MISSED"} (< ${GOAL_MS / 1000} s) |`,
    );
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}

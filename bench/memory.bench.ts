// A long run's memory: `runExperiment` over 1,000 trials (the example's fixture, `nop` agents, no
// graders, four at once) with the process's resident set size sampled after garbage collection
// every 100 finished trials. Goal (issue 26): the peak does not grow with the number of trials
// (the last sample within 10% of the one at 200 trials, once start-up allocations have settled).
// `--trials=<n>` runs another count.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import {
  type Experiment,
  loadHarnessCatalog,
  loadManifest,
  runExperiment,
} from "../src/compare/index.js";
import { ScriptedExecutor } from "../src/exec/index.js";

const GOAL = 1.1;
const EXAMPLE = fileURLToPath(new URL("../examples/fix-the-bug/", import.meta.url));
const EVERY = 100;

async function nopExperiment(trials: number): Promise<Experiment> {
  const loaded = await loadManifest(join(EXAMPLE, "experiment.json"), {
    loadCatalog: loadHarnessCatalog,
  });
  if (!loaded.ok) throw new Error(loaded.problems.map((p) => p.message).join("; "));
  const experiment = loaded.experiment;
  // Two variants: half the trials each.
  const perVariant = Math.max(1, Math.round(trials / experiment.variants.length));
  return {
    ...experiment,
    tasks: experiment.tasks.map((task) => ({ ...task, graders: [] })),
    variants: experiment.variants.map((variant) => ({ ...variant, agent: { kind: "nop" } })),
    trials: { ...experiment.trials, count: perVariant, manifestCount: perVariant },
    concurrency: 4,
  };
}

export async function run(): Promise<void> {
  const given = process.argv.find((a) => a.startsWith("--trials="));
  const trials = given === undefined ? 1000 : Number(given.slice("--trials=".length));
  if (!Number.isInteger(trials) || trials < 2)
    throw new Error(`--trials=${trials}: give 2 or more`);
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  const experiment = await nopExperiment(trials);
  const dir = await mkdtemp(join(tmpdir(), "hl-bench-memory-"));
  const samples: Array<{ done: number; rssMiB: number; heapMiB: number }> = [];
  let next = EVERY;
  const sample = (done: number) => {
    gc();
    const usage = process.memoryUsage();
    samples.push({ done, rssMiB: usage.rss / 1048576, heapMiB: usage.heapUsed / 1048576 });
  };
  try {
    sample(0);
    const started = performance.now();
    await runExperiment(experiment, {
      outDir: join(dir, "out"),
      manifestDocument: {},
      manifestHash: "0".repeat(64),
      stateDir: join(dir, "state"),
      executorFor: () => new ScriptedExecutor({ secretValues: [] }),
      onProgress: (progress) => {
        if (progress.done >= next) {
          sample(progress.done);
          next += EVERY;
        }
      },
    });
    const seconds = (performance.now() - started) / 1000;
    console.log(`${trials} trials in ${seconds.toFixed(0)} s`);
    console.log("| trials done | RSS MiB (after GC) | heap used MiB |");
    console.log("|---:|---:|---:|");
    for (const s of samples)
      console.log(`| ${s.done} | ${s.rssMiB.toFixed(1)} | ${s.heapMiB.toFixed(1)} |`);
    const settled = samples.find((s) => s.done >= 2 * EVERY) ?? samples[1];
    const last = samples.at(-1);
    if (settled && last && last !== settled) {
      const ratio = last.rssMiB / settled.rssMiB;
      console.log(
        `RSS at ${last.done} trials / at ${settled.done}: ${ratio.toFixed(2)} — ${ratio <= GOAL ? "ok" : "MISSED"} (<= ${GOAL}); heap ${(last.heapMiB - settled.heapMiB).toFixed(1)} MiB more`,
      );
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

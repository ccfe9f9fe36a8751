// `npm run bench -- verdict-scale`: what deciding costs a long sequential run. A 200-task × 50-trial
// experiment (20,000 trials, two variants no different, so the design runs to its end) is fed to
// the run's stopping check one trial at a time, as compare run feeds it; the time it spends is
// set against the run's own wall time at the measured duration of a real trial of
// examples/fix-the-bug (scripted agents, its graders) in the same run. Goal: under 1 %. For
// comparison, the old way (the whole verdict decided again after every trial) is timed at a few
// points and its total estimated from them.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  loadHarnessCatalog,
  loadManifest,
  mulberry32,
  runExperiment,
} from "../src/compare/index.js";
import { ScriptedExecutor } from "../src/exec/index.js";
import {
  assumedTrial,
  canStopEarly,
  DEFAULT_PAIRED_POLICY,
  type StoppingOptions,
  type TrialRecord,
  type TrialRef,
  watchSequentialDesign,
} from "../src/stats/index.js";

const TASKS = 200;
const TRIALS = 50;
const GOAL = 0.01;
const EXAMPLE = fileURLToPath(new URL("../examples/fix-the-bug/experiment.json", import.meta.url));

function plannedOrder(): TrialRef[] {
  const order: TrialRef[] = [];
  for (let trial = 1; trial <= TRIALS; trial++)
    for (let task = 0; task < TASKS; task++)
      for (const variant of ["base", "cand"]) order.push({ variant, task: `t${task}`, trial });
  return order;
}

/** Mean seconds of one trial of the example, through runExperiment. */
async function exampleTrialSeconds(): Promise<number> {
  const loaded = await loadManifest(EXAMPLE, {
    trialsOverride: 3,
    loadCatalog: loadHarnessCatalog,
  });
  if (!loaded.ok) throw new Error("the example does not load");
  const out = await mkdtemp(join(tmpdir(), "hl-bench-verdict-"));
  try {
    const started = performance.now();
    await runExperiment(
      { ...loaded.experiment, concurrency: 1 },
      {
        outDir: join(out, "run"),
        manifestDocument: loaded.manifest,
        manifestHash: loaded.manifestHash,
        executorFor: () => new ScriptedExecutor(),
        stateDir: join(out, "state"),
      },
    );
    return (performance.now() - started) / 1000 / 6;
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}

export async function run(): Promise<void> {
  const order = plannedOrder();
  const random = mulberry32(2026);
  const trials: TrialRecord[] = order.map((ref) => assumedTrial(ref, random() < 0.5));
  const options: StoppingOptions = {
    baseline: "base",
    policy: { ...DEFAULT_PAIRED_POLICY, design: "sequential" },
    variants: ["base", "cand"],
    tasks: Array.from({ length: TASKS }, (_, i) => `t${i}`),
    plannedTrials: TRIALS,
    order,
  };

  // The run's way: each trial fed once; the whole decision only when the watch says so.
  const watch = watchSequentialDesign(options);
  let asked = 0;
  const started = performance.now();
  for (let i = 0; i < trials.length; i++)
    if (watch.record(trials[i] as TrialRecord)) {
      asked += 1;
      canStopEarly(trials.slice(0, i + 1), options);
    }
  const decidingSeconds = (performance.now() - started) / 1000;

  // The old way, sampled: the whole decision after trial n, at ten points of the run.
  const samples: number[] = [];
  for (let k = 1; k <= 10; k++) {
    const n = Math.round((trials.length * k) / 10);
    const at = performance.now();
    canStopEarly(trials.slice(0, n), options);
    samples.push((performance.now() - at) / 1000);
  }
  // Its cost grows with n: the mean of evenly spaced samples times the trials estimates the sum.
  const oldSeconds = (samples.reduce((a, b) => a + b, 0) / samples.length) * trials.length;

  const trialSeconds = await exampleTrialSeconds();
  const wall = trials.length * trialSeconds;
  const share = decidingSeconds / (wall + decidingSeconds);
  const oldShare = oldSeconds / (wall + oldSeconds);
  console.log(
    `${TASKS} tasks × ${TRIALS} trials × 2 variants (${trials.length} trials), sequential design, no difference (runs to the end)`,
  );
  console.log(
    `deciding, as compare run decides: ${decidingSeconds.toFixed(2)} s in all (${asked} whole decision(s)), ${((decidingSeconds / trials.length) * 1e6).toFixed(0)} µs per trial`,
  );
  console.log(
    `deciding after every trial (the old way, estimated from 10 samples of ${samples.map((s) => s.toFixed(2)).join(", ")} s): ${(oldSeconds / 3600).toFixed(1)} h`,
  );
  console.log(
    `a trial of examples/fix-the-bug here: ${trialSeconds.toFixed(2)} s, so the run's wall time at concurrency 1 is about ${(wall / 3600).toFixed(1)} h`,
  );
  console.log(
    `share of the run's wall time spent deciding: ${(100 * share).toFixed(3)} % (old way ${(100 * oldShare).toFixed(1)} %); goal < ${100 * GOAL} %: ${share < GOAL ? "met" : "MISSED"}`,
  );
}

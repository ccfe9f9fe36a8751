// Planning: which trials run, in which order, and where their artifacts go. Pure.
import type { TrialRef } from "../../stats/index.js";
import type { Experiment, TrialJob } from "../experiment.js";
import { mulberry32, shuffleInPlace } from "./prng.js";

/**
 * The execution order of an experiment. Tasks run in manifest order. For each task the
 * natural list is built trial-major — trial 1 of every variant (in manifest order, v1:
 * H0 then H1), then trial 2, … — and with `order: "randomized"` it is Fisher–Yates
 * shuffled by one mulberry32 stream seeded with `trials.seed` and shared by all tasks
 * in order. For a v1 manifest this reproduces better-harness's order for the same seed
 * and count. `order: "sequential"` keeps the natural list.
 */
export function planTrials(experiment: Experiment): TrialJob[] {
  if (experiment.verdict.kind === "paired-v1" && experiment.verdict.design === "sequential")
    return planRounds(experiment);
  const random = mulberry32(experiment.trials.seed);
  const jobs: TrialJob[] = [];
  for (const task of experiment.tasks) {
    const natural: Array<Omit<TrialJob, "seq">> = [];
    for (let trialIndex = 1; trialIndex <= experiment.trials.count; trialIndex += 1) {
      for (const variant of experiment.variants) {
        natural.push({ task: task.id, variant: variant.id, trialIndex });
      }
    }
    if (experiment.trials.order === "randomized") shuffleInPlace(natural, random);
    for (const job of natural) jobs.push({ seq: jobs.length + 1, ...job });
  }
  return jobs;
}

/**
 * The order of a sequential design: round by round — trial 1 of every task and variant, then
 * trial 2, … — so that every look of the design sees every task, and a run that stops early has
 * run the same number of trials on each. With `order: "randomized"` each round is shuffled by
 * the seeded stream; `sequential` keeps tasks and variants in manifest order.
 */
function planRounds(experiment: Experiment): TrialJob[] {
  const random = mulberry32(experiment.trials.seed);
  const jobs: TrialJob[] = [];
  for (let trialIndex = 1; trialIndex <= experiment.trials.count; trialIndex += 1) {
    const round: Array<Omit<TrialJob, "seq">> = [];
    for (const task of experiment.tasks)
      for (const variant of experiment.variants)
        round.push({ task: task.id, variant: variant.id, trialIndex });
    if (experiment.trials.order === "randomized") shuffleInPlace(round, random);
    for (const job of round) jobs.push({ seq: jobs.length + 1, ...job });
  }
  return jobs;
}

/** The planned order as the statistics stage reads it (the sequential design needs it). */
export function plannedOrder(experiment: Experiment): TrialRef[] {
  return planTrials(experiment).map((job) => ({
    variant: job.variant,
    task: job.task,
    trial: job.trialIndex,
  }));
}

/** `trial-001`: trial directories sort in trial order for up to 999 trials. */
function trialDirName(trialIndex: number): string {
  return `trial-${String(trialIndex).padStart(3, "0")}`;
}

/**
 * Where a trial's artifacts live under `--out`, as a POSIX relative path (docs/artifacts.md):
 * `H0/trial-001` for a v1 experiment (one task, variants H0/H1), and
 * `<variant>/<task>/trial-001` for v2.
 */
export function trialArtifactDir(
  experiment: Pick<Experiment, "layout">,
  variantId: string,
  taskId: string,
  trialIndex: number,
): string {
  if (!Number.isInteger(trialIndex) || trialIndex < 1) {
    throw new Error(`trialArtifactDir: trialIndex must be a positive integer, got ${trialIndex}`);
  }
  return experiment.layout === "v1"
    ? `${variantId}/${trialDirName(trialIndex)}`
    : `${variantId}/${taskId}/${trialDirName(trialIndex)}`;
}

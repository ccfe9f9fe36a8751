// What `--resume` may reuse: the finished trials of an earlier run of exactly the same inputs.
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { type RunManifest, type TrialMetrics, trialMetricsSchema } from "./artifacts-contract.js";
import { ExperimentInputError } from "./errors.js";
import type { Experiment, TrialJob } from "./experiment.js";
import { trialArtifactDir } from "./plan.js";

export async function readFinishedTrial(dir: string): Promise<TrialMetrics | undefined> {
  try {
    const parsed = trialMetricsSchema.safeParse(
      JSON.parse(await readFile(join(dir, "metrics.json"), "utf8")),
    );
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** sha256 of each variant's scripted agent module or oracle patch (null for built-ins and real hosts). */
export async function hashAgents(experiment: Experiment): Promise<Record<string, string | null>> {
  const hashes: Record<string, string | null> = {};
  for (const variant of experiment.variants) {
    const agent = variant.agent;
    const file =
      agent?.kind === "module"
        ? agent.modulePath
        : agent?.kind === "oracle"
          ? agent.patchFile
          : null;
    hashes[variant.id] =
      file === null
        ? null
        : `sha256:${createHash("sha256")
            .update(await readFile(file))
            .digest("hex")}`;
  }
  return hashes;
}

export async function collectResumable(
  outDir: string,
  experiment: Experiment,
  jobs: readonly TrialJob[],
  current: RunManifest,
  reusable: Map<number, TrialMetrics>,
): Promise<void> {
  let previous: RunManifest | undefined;
  try {
    previous = JSON.parse(await readFile(join(outDir, "manifest.json"), "utf8")) as RunManifest;
  } catch {
    return; // nothing to resume: a fresh run into an empty or new directory
  }
  const same =
    previous.evidence?.inputsHash !== undefined &&
    previous.evidence.inputsHash === current.evidence.inputsHash;
  if (!same) {
    throw new ExperimentInputError(join(outDir, "manifest.json"), [
      {
        path: "--resume",
        message:
          "the earlier run in this directory used different inputs (manifest, harness, fixture, prompt, grader contract, agent module or trial count); resume only the same experiment, or choose a new --out",
      },
    ]);
  }
  for (const job of jobs) {
    const dir = join(outDir, trialArtifactDir(experiment, job.variant, job.task, job.trialIndex));
    const finished = await readFinishedTrial(dir);
    if (finished && finished.seq === job.seq) reusable.set(job.seq, finished);
  }
}

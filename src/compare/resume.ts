// What `--resume` may reuse: the finished trials of an earlier run of exactly the same inputs,
// and what it clears first: the temporary directories and half-written files a run killed
// mid-way left behind.
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { readValidJsonFile, removeAtomicLeftovers } from "../shared/index.js";
import {
  type FrozenTasks,
  frozenTasksSchema,
  type RunManifest,
  runInputsSchema,
  type TrialMetrics,
  trialMetricsSchema,
} from "./artifacts-contract.js";
import { ExperimentInputError } from "./errors.js";
import type { Experiment, TrialJob } from "./experiment.js";
import { trialArtifactDir } from "./plan.js";
import { isRetryableInfraError } from "./retry.js";
import { differingInputs } from "./run-inputs.js";
import { type AbandonedWorkspace, removeAbandonedWorkspace } from "./workspace-marker.js";

export async function readFinishedTrial(dir: string): Promise<TrialMetrics | undefined> {
  return readValidJsonFile(join(dir, "metrics.json"), trialMetricsSchema);
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

const ADVICE =
  "resume only the same experiment with the same inputs, or choose a new --out for this one";

/**
 * Why the run recorded in `outDir` cannot be continued with today's inputs: one sentence per
 * input that differs. Empty when they are the same; undefined when no run is recorded there.
 */
async function resumeRefusals(
  outDir: string,
  current: RunManifest,
  currentFrozen?: FrozenTasks,
): Promise<string[] | undefined> {
  let previous: RunManifest;
  try {
    previous = JSON.parse(await readFile(join(outDir, "manifest.json"), "utf8")) as RunManifest;
  } catch {
    return undefined; // nothing to resume: a fresh run into an empty or new directory
  }
  const before = previous?.evidence?.inputsHash;
  if (before !== undefined && before === current.evidence.inputsHash) return [];
  const detailThen = runInputsSchema.safeParse(previous?.evidence?.inputs);
  const detailNow = current.evidence.inputs;
  const differences =
    detailThen.success && detailNow !== undefined
      ? differingInputs(detailThen.data, detailNow)
      : [];
  if (differences.length > 0)
    return currentFrozen === undefined
      ? differences
      : namedFixtureChanges(differences, await readFrozen(outDir), currentFrozen);
  return [
    "the earlier run in this directory used different inputs (manifest, harness, fixture, prompt, grader contract, agent module, trial count, runtime or verdict policy); its record does not say which",
  ];
}

/**
 * Refuses (ExperimentInputError, before anything is written) to continue a run in `outDir`
 * whose inputs differ from today's, naming each input that differs. Returns whether a run with
 * the same inputs is recorded there (false: nothing to continue).
 */
export async function assertSameInputs(
  outDir: string,
  current: RunManifest,
  currentFrozen?: FrozenTasks,
): Promise<boolean> {
  const refusals = await resumeRefusals(outDir, current, currentFrozen);
  if (refusals === undefined) return false;
  if (refusals.length === 0) return true;
  throw new ExperimentInputError(
    join(outDir, "manifest.json"),
    refusals.map((message) => ({ path: "changed input", message })),
    `cannot resume: the earlier run here used different inputs; ${ADVICE}`,
  );
}

function readFrozen(outDir: string): Promise<FrozenTasks | undefined> {
  return readValidJsonFile(join(outDir, "frozen-task.json"), frozenTasksSchema);
}

const MAX_NAMED_FILES = 5;

/** `a, b, c and 4 more` */
function fileList(paths: readonly string[]): string {
  const shown = paths.slice(0, MAX_NAMED_FILES).join(", ");
  return paths.length > MAX_NAMED_FILES
    ? `${shown} and ${paths.length - MAX_NAMED_FILES} more`
    : shown;
}

/** Adds to each "the fixture of task X differs" which files changed, were added or removed. */
function namedFixtureChanges(
  differences: readonly string[],
  then: FrozenTasks | undefined,
  now: FrozenTasks,
): string[] {
  if (then === undefined) return [...differences];
  return differences.map((line) => {
    const match = /^the fixture of task (.+?) differs:/.exec(line);
    const before = match && then.tasks.find((t) => t.id === match[1]);
    const after = match && now.tasks.find((t) => t.id === match[1]);
    if (!before || !after) return line;
    const key = (f: FrozenTasks["tasks"][number]["fixtureFiles"][number]) =>
      `${f.kind}:${f.sha256 ?? ""}:${f.bytes}`;
    const old = new Map(before.fixtureFiles.map((f) => [f.path, key(f)]));
    const cur = new Map(after.fixtureFiles.map((f) => [f.path, key(f)]));
    const changedFiles = [...cur]
      .filter(([p, k]) => old.has(p) && old.get(p) !== k)
      .map(([p]) => p);
    const added = [...cur.keys()].filter((p) => !old.has(p));
    const removed = [...old.keys()].filter((p) => !cur.has(p));
    const parts = [
      changedFiles.length > 0 ? `changed ${fileList(changedFiles)}` : "",
      added.length > 0 ? `added ${fileList(added)}` : "",
      removed.length > 0 ? `removed ${fileList(removed)}` : "",
    ].filter(Boolean);
    return parts.length > 0 ? `${line} (${parts.join("; ")})` : line;
  });
}

/** The recorded trial when it is finished and is the very trial the plan puts in that folder. */
function matchesPlan(metrics: TrialMetrics, job: TrialJob): boolean {
  return (
    metrics.seq === job.seq &&
    metrics.task === job.task &&
    metrics.variant === job.variant &&
    metrics.trial === job.trialIndex
  );
}

/**
 * Checks that the run in `outDir` had the same inputs (see `assertSameInputs`) and collects its
 * finished trials into `reusable`. Reads only.
 */
export async function collectResumable(
  outDir: string,
  experiment: Experiment,
  jobs: readonly TrialJob[],
  current: RunManifest,
  reusable: Map<number, TrialMetrics>,
  retryLimit = 0,
  currentFrozen?: FrozenTasks,
): Promise<void> {
  // Trial folders without a readable manifest.json beside them prove nothing: run them again.
  if (!(await assertSameInputs(outDir, current, currentFrozen))) return;
  for (const job of jobs) {
    const dir = join(outDir, trialArtifactDir(experiment, job.variant, job.task, job.trialIndex));
    const finished = await readFinishedTrial(dir);
    // A retryable infrastructure error with attempts left under today's --retry-infra is not
    // finished: it gets its next attempt (a run killed between an attempt and its retry, or a
    // resume that allows more retries).
    const wantsRetry =
      finished !== undefined &&
      isRetryableInfraError(finished) &&
      finished.retriedAttempts.length < retryLimit;
    if (finished && matchesPlan(finished, job) && !wantsRetry) reusable.set(job.seq, finished);
  }
}

export interface ClearedLeftovers {
  /** Temporary workspaces of trials a killed run left, as their folders' notes named them. */
  workspaces: AbandonedWorkspace[];
  /** Half-written files at the top of --out. */
  partialFiles: string[];
}

/**
 * Clears what a run killed mid-way left (call it holding the run lock, so that no live trial's
 * workspace is touched): the temporary directory of every trial whose folder still notes one,
 * and the temporary files of interrupted atomic writes. Trial folders without a finished record
 * are cleared by the runner when their trial runs again.
 */
export async function clearLeftovers(
  outDir: string,
  experiment: Experiment,
  jobs: readonly TrialJob[],
  tempParent: string,
): Promise<ClearedLeftovers> {
  const workspaces: AbandonedWorkspace[] = [];
  for (const job of jobs) {
    const dir = join(outDir, trialArtifactDir(experiment, job.variant, job.task, job.trialIndex));
    const found = await removeAbandonedWorkspace(dir, tempParent);
    if (found) workspaces.push(found);
  }
  return { workspaces, partialFiles: await removeAtomicLeftovers(outDir) };
}

// What `--resume` may reuse: the finished trials of an earlier run of exactly the same inputs,
// and what it clears first: the temporary directories and half-written files a run killed
// mid-way left behind.
import { createHash } from "node:crypto";
import { mkdir, readdir, readFile, rename } from "node:fs/promises";
import { join } from "node:path";
import {
  type FrozenTasks,
  frozenTasksSchema,
  type RunManifest,
  runInputsSchema,
  type TrialMetrics,
  trialMetricsSchema,
} from "../../artifacts/index.js";
import { readValidJsonFile, removeAtomicLeftovers } from "../../shared/index.js";
import { ExperimentInputError } from "../errors.js";
import { loadRunKey, type RunKey, verifyRecord } from "../evidence/record-seal.js";
import type { Experiment, TrialJob } from "../experiment.js";
import { trialArtifactDir } from "./plan.js";
import { isRetryableInfraError } from "./retry.js";
import { differingInputs } from "./run-inputs.js";
import {
  type AbandonedWorkspace,
  removeAbandonedWorkspace,
  removeAbandonedWorkspaces,
} from "./workspace-marker.js";

async function readFinishedTrial(dir: string): Promise<TrialMetrics | undefined> {
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
async function assertSameInputs(
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

/** A finished-looking record --resume refused: its trial runs again, the record is set aside. */
export interface RejectedRecord {
  /** Relative to --out. */
  artifactDir: string;
  reason: string;
}

export interface ResumeFindings {
  /** The earlier run's record key, when it is available (its records then verify). */
  runKey?: RunKey;
  /** Records that did not verify; their trials run again. */
  rejected: RejectedRecord[];
}

/** The run id manifest.json records, if any. */
async function recordedRunId(outDir: string): Promise<string | undefined> {
  try {
    const value = JSON.parse(await readFile(join(outDir, "manifest.json"), "utf8")) as unknown;
    const id = (value as { evidence?: { runId?: unknown } } | null)?.evidence?.runId;
    return typeof id === "string" ? id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Checks that the run in `outDir` had the same inputs (see `assertSameInputs`) and collects its
 * finished trials into `reusable`: only records whose seal verifies with the run's key (kept
 * outside --out), so nothing planted in --out is ever counted. Reads only.
 */
export async function collectResumable(
  outDir: string,
  experiment: Experiment,
  jobs: readonly TrialJob[],
  current: RunManifest,
  reusable: Map<number, TrialMetrics>,
  retryLimit: number,
  currentFrozen: FrozenTasks | undefined,
  stateDir: string,
): Promise<ResumeFindings> {
  // A directory that holds files but no run of harnesslab's is the user's: never written into.
  if (!(await assertSameInputs(outDir, current, currentFrozen))) {
    await assertNotForeign(outDir);
    return { rejected: [] };
  }
  const loaded = await loadRunKey(stateDir, await recordedRunId(outDir));
  const runKey = loaded.ok ? loaded.key : undefined;
  const rejected: RejectedRecord[] = [];
  for (const job of jobs) {
    const relative = trialArtifactDir(experiment, job.variant, job.task, job.trialIndex);
    const dir = join(outDir, relative);
    const found = await readFinishedTrial(dir);
    if (found === undefined) continue;
    const check = await verifyRecord(dir, found, runKey);
    if (!check.ok) {
      rejected.push({
        artifactDir: relative,
        reason: loaded.ok ? check.reason : `${check.reason}: ${loaded.reason}`,
      });
      continue;
    }
    const finished: TrialMetrics | undefined = found;
    // A retryable infrastructure error with attempts left under today's --retry-infra is not
    // finished: it gets its next attempt (a run killed between an attempt and its retry, or a
    // resume that allows more retries).
    const wantsRetry =
      finished !== undefined &&
      isRetryableInfraError(finished) &&
      finished.retriedAttempts.length < retryLimit;
    if (finished && matchesPlan(finished, job) && !wantsRetry) reusable.set(job.seq, finished);
  }
  return { ...(runKey ? { runKey } : {}), rejected };
}

/** Refuses --resume into a non-empty directory that holds no run (it would overwrite the user's files). */
async function assertNotForeign(outDir: string): Promise<void> {
  const names = await readdir(outDir).catch(() => [] as string[]);
  if (names.length === 0) return;
  throw new ExperimentInputError(
    outDir,
    [
      {
        path: "(directory)",
        message: `holds ${names.length} entr${names.length === 1 ? "y" : "ies"} (${names.slice(0, 3).join(", ")}${names.length > 3 ? ", …" : ""}) but no run harnesslab started (no readable manifest.json); --resume continues only such a run`,
      },
    ],
    "cannot resume here: choose an empty or new --out for a new run",
  );
}

/** Folder the rejected records are moved into, under --out. */
const REJECTED_RECORDS_DIR = "rejected-records";

/**
 * Moves each rejected record's folder to `rejected-records/<its path>/<n>` (kept as evidence of
 * what was found) so its trial starts from an empty folder. Call it holding the run lock.
 */
export async function setAsideRejected(
  outDir: string,
  rejected: readonly RejectedRecord[],
): Promise<Array<RejectedRecord & { movedTo: string }>> {
  const moved: Array<RejectedRecord & { movedTo: string }> = [];
  for (const record of rejected) {
    const base = join(REJECTED_RECORDS_DIR, record.artifactDir);
    await mkdir(join(outDir, base), { recursive: true });
    let n = 1;
    while ((await readdir(join(outDir, base))).includes(String(n))) n += 1;
    const movedTo = `${base}/${n}`;
    await rename(join(outDir, record.artifactDir), join(outDir, movedTo));
    moved.push({ ...record, movedTo });
  }
  return moved;
}

export interface ClearedLeftovers {
  /**
   * Temporary workspaces of trials a killed run left, as their folders' notes named them, and its
   * shared baselines, as the note at the top of --out named them.
   */
  workspaces: AbandonedWorkspace[];
  /** Half-written files at the top of --out. */
  partialFiles: string[];
}

/**
 * Clears what a run killed mid-way left (call it holding the run lock, so that no live trial's
 * workspace is touched): the temporary directory of every trial whose folder still notes one,
 * the run's shared baselines, and the temporary files of interrupted atomic writes. Trial
 * folders without a finished record are cleared by the runner when their trial runs again.
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
  workspaces.push(...(await removeAbandonedWorkspaces(outDir, tempParent)));
  return { workspaces, partialFiles: await removeAtomicLeftovers(outDir) };
}

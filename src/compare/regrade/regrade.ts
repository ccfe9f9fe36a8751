// `compare regrade`: re-runs the graders on recorded trials without re-running any agent.
// Each trial's recorded patch is applied to a fresh copy of the frozen fixture, graded,
// and classified with its recorded receipt; the new verdict is written beside the old.
// It holds the --out lock like a run, notes its workspaces like a run's trials, and when it
// is stopped (a signal) it writes nothing it has not finished: no new verdict, no checks.
import { copyFile, readdir, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import {
  frozenTasksSchema,
  type RunManifest,
  runManifestSchema,
  type TrialMetrics,
  trialMetricsSchema,
  VALIDATION_VERSION,
  type VerdictDocument,
  verdictDocumentSchema,
} from "../../artifacts/index.js";
import {
  type RuntimeReceipt,
  runtimeReceiptSchema,
  secretValuesFromEnv,
} from "../../exec/index.js";
import { type Grade, loadReadmeContract } from "../../graders/index.js";
import type { CommandSandbox } from "../../sandbox/index.js";
import { type RepoState, validateRepoState } from "../../scoring/index.js";
import {
  type InputProblem,
  InvalidInputError,
  readJsonFile,
  readValidJsonFile,
  removeAtomicLeftovers,
  runPool,
} from "../../shared/index.js";
import { type SharedBaseline, snapshotTree, type TreeSnapshot } from "../../workspace/index.js";
import { defaultStateDir, loadRunKey, verifyRecord } from "../evidence/record-seal.js";
import {
  buildVerdictDocument,
  methodChangeOf,
  stoppingDecision,
  stopsBySequentialDesign,
  writeVerdictFiles,
} from "../evidence/verdict.js";
import type { Experiment, TaskSpec } from "../experiment.js";
import { loadHarnessCatalog, loadManifest } from "../manifest/index.js";
import { assembleExperiment } from "../run/assemble.js";
import { shareBaselines } from "../run/baselines.js";
import { calibrationExperiment } from "../run/calibrate.js";
import { type ChosenSandbox, chooseSandbox } from "../run/containment.js";
import { trialArtifactDir } from "../run/plan.js";
import { describeRunInputs, differingInputs } from "../run/run-inputs.js";
import { createRunLock, resumeCommand } from "../run/run-lock.js";
import {
  markWorkspace,
  removeAbandonedWorkspaces,
  unmarkWorkspaceIfGone,
} from "../run/workspace-marker.js";
import { classifyTrial, type TrialEvidence } from "../trial/classify.js";
import { gradePatch } from "../trial/grade-patch.js";
import { type PreparedGrader, prepareGraders } from "../trial/graders.js";
import { artifactScrubber, graderResults, stoppedEarlyReason } from "../trial/trial-record.js";
import {
  applyContractOverrides,
  type ContractOverride,
  type GraderContractArg,
  parseGraderContractArg,
  resolveGraderContracts,
} from "./contracts.js";
import {
  type RegradeContract,
  type RegradeSummary,
  summarizeRegrade,
  type TrialChange,
} from "./summary.js";

export interface RegradeOptions {
  /** Read the manifest from here instead of where the run recorded it. */
  manifestPath?: string;
  /**
   * `--grader-contract` values: `<file>`, `<grader-id>=<file>` or `<task>/<grader-id>=<file>`;
   * the files are read instead of the manifest's contracts.
   */
  graderContracts?: readonly string[];
  /** What relative contract files resolve against (default: the process's working directory). */
  cwd?: string;
  /** Trials graded at once (default: the run's concurrency). */
  concurrency?: number;
  tempParent?: string;
  /** Where credential values to mask come from (default: the process's environment). */
  env?: Readonly<Record<string, string | undefined>>;
  /**
   * Stops the regrade: no new trial starts, running graders are stopped, and the regrade
   * rejects with the signal's reason having written nothing (no verdict, no trial's checks).
   */
  signal?: AbortSignal;
  now?: () => Date;
  onProgress?: (done: number, total: number) => void;
  /** Run the graders' commands without an OS sandbox (--unsafe-no-sandbox). */
  unsafeNoSandbox?: boolean;
  /** A sandbox of the caller's own (otherwise bubblewrap is used when it can start here). */
  sandbox?: CommandSandbox;
  /** Where the run's record key is kept (default: $HARNESSLAB_STATE_DIR or the user's state directory). */
  stateDir?: string;
}

export type { RegradeContract };

export interface RegradeResult {
  /** `verdict.regrade-NNN` */
  stem: string;
  previous: VerdictDocument;
  verdict: VerdictDocument;
  /** The trials whose outcome or score changed (also in `summary`). */
  changes: TrialChange[];
  summary: RegradeSummary;
  /** Every contract-taking grader's contract, in task order. */
  contracts: RegradeContract[];
  notes: string[];
}

async function nextStem(outDir: string): Promise<{ stem: string; validationFile: string }> {
  const names = await readdir(outDir);
  let n = 1;
  while (names.includes(`verdict.regrade-${String(n).padStart(3, "0")}.json`)) n += 1;
  const suffix = `regrade-${String(n).padStart(3, "0")}`;
  return { stem: `verdict.${suffix}`, validationFile: `validation.${suffix}.json` };
}

async function parsed<T>(
  path: string,
  schema: { safeParse(v: unknown): { success: true; data: T } | { success: false } },
  what: string,
): Promise<T> {
  const value = await readJsonFile(path);
  const result = schema.safeParse(value);
  if (!result.success)
    throw new InvalidInputError(path, [
      { path: "(root)", message: `not a ${what} written by harnesslab` },
    ]);
  return result.data;
}

/** A file of the run at the top of `outDir`; a missing one means there is no finished run. */
async function runFile<T>(
  outDir: string,
  name: string,
  schema: { safeParse(v: unknown): { success: true; data: T } | { success: false } },
  what: string,
  whenMissing: string,
): Promise<T> {
  try {
    return await parsed(join(outDir, name), schema, what);
  } catch (error) {
    if (error instanceof InvalidInputError && isMissingFile(error)) {
      const message = `no finished run in this directory (${name} not found${whenMissing})`;
      throw new InvalidInputError(outDir, [{ path: "(file)", message }], message);
    }
    throw error;
  }
}

function isMissingFile(error: InvalidInputError): boolean {
  return error.problems.length === 1 && error.problems[0]?.message === "file not found";
}

/** The manifest a run recorded, for advice; undefined when it cannot be read. */
async function recordedManifestPath(outDir: string): Promise<string | undefined> {
  try {
    const value = JSON.parse(await readFile(join(outDir, "manifest.json"), "utf8")) as unknown;
    const path = (value as { manifestPath?: unknown } | null)?.manifestPath;
    return typeof path === "string" ? path : undefined;
  } catch {
    return undefined;
  }
}

/** How far a run that did not run every planned trial got. */
interface PartialRun {
  ran: number;
  planned: number;
}

/**
 * A regrade of a run that did not finish would judge the subset of trials it happened to
 * finish: refused (the run is finished with --resume first). A run that stopped early
 * (--stop-early) ran fewer trials by design: returned, so the new verdict can say so.
 */
function checkRunFinished(
  outDir: string,
  runManifest: RunManifest,
  previous: VerdictDocument,
): PartialRun | null {
  const planned = runManifest.evidence.executionOrder.length;
  const ran = previous.trials.length;
  const stoppedEarly = !previous.interrupted && previous.stoppedEarly;
  if (ran >= planned && !previous.interrupted) return null;
  if (stoppedEarly) return { ran, planned };
  throw new InvalidInputError(
    join(outDir, "verdict.json"),
    [
      {
        path: previous.interrupted ? "interrupted" : "trials",
        message: `the run in ${outDir} was interrupted after ${ran} of ${planned} trials; finish it with \`${resumeCommand(outDir, runManifest.manifestPath)}\` first, then regrade`,
      },
    ],
    "cannot regrade a run that did not finish",
  );
}

/**
 * Each recorded trial must sit in the folder the plan gives it: verdict.json is only read, and
 * a folder it names anywhere else (edited by hand, another run's) is never read or written.
 */
function checkTrialFolders(
  outDir: string,
  experiment: Pick<Experiment, "layout">,
  previous: VerdictDocument,
): void {
  const problems: InputProblem[] = [];
  const seen = new Set<string>();
  previous.trials.forEach((trial, index) => {
    let expected: string | undefined;
    try {
      expected = trialArtifactDir(experiment, trial.variant, trial.task, trial.trial);
    } catch {
      expected = undefined;
    }
    const path = `trials[${index}].artifactDir`;
    if (expected === undefined)
      problems.push({
        path: `trials[${index}].trial`,
        message: "expected a positive trial number",
      });
    else if (trial.artifactDir !== expected)
      problems.push({
        path,
        message: `is ${JSON.stringify(trial.artifactDir)}, but trial ${trial.trial} of ${trial.variant} on ${trial.task} lives in ${expected}`,
      });
    else if (seen.has(expected))
      problems.push({ path, message: `${expected} is listed more than once` });
    if (expected !== undefined) seen.add(expected);
  });
  if (problems.length > 0)
    throw new InvalidInputError(
      join(outDir, "verdict.json"),
      problems,
      "the verdict's trials are not where the run puts them; regrade only verdicts harnesslab wrote",
    );
}

/**
 * What changed since the run, one note each, from the inputs the run recorded: the manifest's
 * graders, contracts, tasks and policy (the fixture was checked already; agents do not run).
 */
function manifestNotes(input: {
  runManifest: RunManifest;
  previous: VerdictDocument;
  experiment: Experiment;
  manifestHash: string;
  harnessHash: string;
  fixtureHashes: Record<string, string>;
  graders: ReadonlyMap<string, readonly PreparedGrader[]>;
  overrides: readonly ContractOverride[];
}): string[] {
  const then = input.runManifest.evidence.inputs;
  const manifestChanged = input.manifestHash !== input.previous.evidence.manifestHash;
  const harnessChanged = input.harnessHash !== input.previous.evidence.harnessHash;
  if (then === undefined) {
    // A run recorded before its inputs were: only the overall hashes can be compared.
    const notes: string[] = [];
    if (manifestChanged)
      notes.push("the manifest changed since the run (graders or contracts may differ)");
    if (harnessChanged) notes.push("the .harness files changed since the run");
    return notes;
  }
  const contractHashes = new Map(
    input.experiment.tasks.map((task) => [
      task.id,
      new Map(
        task.graders.map((grader) => {
          // A contract given with --grader-contract is compared on its own line: here the run's.
          const overridden = input.overrides.some(
            (o) => o.task === task.id && o.grader === grader.id,
          );
          const prepared = input.graders.get(task.id)?.find((g) => g.id === grader.id);
          const recorded = then.tasks[task.id]?.graders[grader.id]?.contract ?? null;
          return [grader.id, overridden ? recorded : (prepared?.contractHash ?? null)] as const;
        }),
      ),
    ]),
  );
  const now = describeRunInputs({
    experiment: input.experiment,
    manifestHash: input.manifestHash,
    harnessHash: input.harnessHash,
    fixtureHashes: input.fixtureHashes,
    agentHashes: then.agents,
    contractHashes,
  });
  const differences = differingInputs(then, now).filter((d) => !d.startsWith("the manifest file "));
  if (differences.length === 0)
    return manifestChanged
      ? ["the manifest file changed since the run, but nothing a regrade uses differs"]
      : [];
  return differences.map((d) => `changed since the run: ${d}`);
}

export async function regradeRun(
  outDirArg: string,
  options: RegradeOptions = {},
): Promise<RegradeResult> {
  const outDir = resolve(outDirArg);
  const contractArgs = parseContractArgs(options.graderContracts ?? [], options.cwd);
  const startedAt = (options.now ?? (() => new Date()))().toISOString();
  // A run still writing here, or another regrade choosing the same NNN, must not interleave;
  // and while a run is in progress (or was killed) there is no finished verdict to regrade.
  const lock = createRunLock(outDir, {
    kind: "regrade",
    takeOverStale: false,
    manifestPath: await recordedManifestPath(outDir),
  });
  await lock.assertAvailable();
  const run = await readFinishedRun(outDir);
  const inputs = await loadRegradeInputs(outDir, run, contractArgs, options);
  const setup = await prepareRegrade(outDir, run, inputs, options);
  options.signal?.throwIfAborted();
  await lock.acquire();
  try {
    return await regradeHoldingLock(setup, options, startedAt);
  } finally {
    await lock.release();
  }
}

/** The finished run in --out: what it recorded, and how far it got when it stopped early. */
interface FinishedRun {
  runManifest: RunManifest;
  previous: VerdictDocument;
  partialRun: PartialRun | null;
}

async function readFinishedRun(outDir: string): Promise<FinishedRun> {
  const runManifest = await runFile(outDir, "manifest.json", runManifestSchema, "run manifest", "");
  const previous = await runFile(
    outDir,
    "verdict.json",
    verdictDocumentSchema,
    "verdict",
    `: the run stopped before it finished; finish it with \`${resumeCommand(outDir, runManifest.manifestPath)}\``,
  );
  return { runManifest, previous, partialRun: checkRunFinished(outDir, runManifest, previous) };
}

/** The experiment to regrade with (the manifest, today's contracts) and the run's fixtures. */
interface RegradeInputs {
  manifestPath: string;
  loaded: Extract<Awaited<ReturnType<typeof loadManifest>>, { ok: true }>;
  overrides: ContractOverride[];
  experiment: Experiment;
  assembled: Extract<Awaited<ReturnType<typeof assembleExperiment>>, { ok: true }>;
  fixtureHashes: Record<string, string>;
  fixtureSnapshots: Map<string, TreeSnapshot>;
}

async function loadRegradeInputs(
  outDir: string,
  { runManifest, previous }: FinishedRun,
  contractArgs: GraderContractArg[],
  options: RegradeOptions,
): Promise<RegradeInputs> {
  const manifestPath = options.manifestPath
    ? resolve(options.manifestPath)
    : runManifest.manifestPath;
  const loaded = await loadManifest(manifestPath, {
    trialsOverride: runManifest.effective.trials,
    loadCatalog: loadHarnessCatalog,
  });
  if (!loaded.ok)
    throw new InvalidInputError(manifestPath, loaded.problems, "cannot load the run's manifest");
  const overrides = resolveGraderContracts(contractArgs, loaded.experiment.tasks);
  if (!overrides.ok)
    throw new InvalidInputError(
      "--grader-contract",
      overrides.problems,
      "cannot re-grade with these contracts",
    );
  await checkContractFiles(overrides.value);
  // An A/A run (--calibrate) compared the baseline with a copy of itself: regrade the same two.
  const planned = runManifest.effective.calibrate
    ? calibrationExperiment(loaded.experiment)
    : loaded.experiment;
  const experiment = {
    ...planned,
    tasks: applyContractOverrides(loaded.experiment.tasks, overrides.value),
  };
  const assembled = await assembleExperiment(experiment);
  if (!assembled.ok)
    throw new InvalidInputError(manifestPath, assembled.problems, "cannot assemble the variants");
  const { fixtureHashes, fixtureSnapshots } = await checkFixtures(
    experiment,
    previous,
    manifestPath,
  );
  checkTrialsKnown(experiment, previous, manifestPath);
  checkTrialFolders(outDir, experiment, previous);
  return {
    manifestPath,
    loaded,
    overrides: overrides.value,
    experiment,
    assembled,
    fixtureHashes,
    fixtureSnapshots,
  };
}

/** Recorded patches apply only to the fixtures the run used. */
async function checkFixtures(
  experiment: Experiment,
  previous: VerdictDocument,
  manifestPath: string,
): Promise<Pick<RegradeInputs, "fixtureHashes" | "fixtureSnapshots">> {
  const fixtureHashes: Record<string, string> = {};
  const fixtureSnapshots = new Map<string, TreeSnapshot>();
  for (const task of experiment.tasks) {
    const snapshot = await snapshotTree(task.fixtureDir);
    fixtureHashes[task.id] = snapshot.hash;
    fixtureSnapshots.set(task.id, snapshot);
    if (previous.evidence.fixtureHashes[task.id] !== snapshot.hash) {
      throw new InvalidInputError(manifestPath, [
        {
          path: `${task.manifestField}.fixture`,
          message: `the fixture of task ${task.id} is not the one the run used (hash ${snapshot.hash}, run used ${previous.evidence.fixtureHashes[task.id] ?? "none"}); recorded patches only apply to the original fixture`,
        },
      ]);
    }
  }
  return { fixtureHashes, fixtureSnapshots };
}

/** Every recorded trial's task and variant must still be in the manifest. */
function checkTrialsKnown(
  experiment: Experiment,
  previous: VerdictDocument,
  manifestPath: string,
): void {
  const missing = previous.trials.filter(
    (t) =>
      !experiment.tasks.some((task) => task.id === t.task) ||
      !experiment.variants.some((v) => v.id === t.variant),
  );
  if (missing.length > 0) {
    throw new InvalidInputError(manifestPath, [
      {
        path: "(manifest)",
        message: `the run has trials of ${[...new Set(missing.map((t) => `${t.variant}/${t.task}`))].join(", ")}, which this manifest no longer defines; regrade with the run's tasks and variants`,
      },
    ]);
  }
}

/** Everything the regrade holding the lock works from. */
interface RegradeSetup extends FinishedRun, RegradeInputs {
  outDir: string;
  graders: Map<string, PreparedGrader[]>;
  contracts: RegradeContract[];
  notes: string[];
  secretValues: readonly string[];
  containment: ChosenSandbox;
  runKey: Awaited<ReturnType<typeof loadRunKey>>;
  tempParent: string;
  /** `tempParent` and its real path: a workspace's directory may be named by either. */
  tempParents: string[];
}

/** The graders and contracts to regrade with, what changed since the run, the sandbox and key. */
async function prepareRegrade(
  outDir: string,
  run: FinishedRun,
  inputs: RegradeInputs,
  options: RegradeOptions,
): Promise<RegradeSetup> {
  const { experiment, loaded, overrides, manifestPath } = inputs;
  const graders = new Map<string, PreparedGrader[]>();
  for (const task of experiment.tasks) graders.set(task.id, await prepareGraders(task));
  const contracts = await describeContracts(outDir, experiment.tasks, graders, overrides);
  const notes = manifestNotes({
    runManifest: run.runManifest,
    previous: run.previous,
    // The manifest as written: a --grader-contract file is reported on its own line.
    experiment: loaded.experiment,
    manifestHash: `sha256:${loaded.manifestHash.replace(/^sha256:/, "")}`,
    harnessHash: inputs.assembled.harnessHash,
    fixtureHashes: inputs.fixtureHashes,
    graders,
    overrides,
  });
  if (run.partialRun)
    notes.push(
      `the run stopped early (${stopsBySequentialDesign(experiment) ? "sequential design" : "--stop-early"}) after ${run.partialRun.ran} of ${run.partialRun.planned} trials; the new verdict judges those ${run.partialRun.ran}`,
    );
  const containment = await chooseSandbox(experiment, {
    ...(options.unsafeNoSandbox ? { unsafeNoSandbox: true } : {}),
    ...(options.sandbox ? { sandbox: options.sandbox } : {}),
    hidden: [outDir, ...experiment.tasks.map((task) => task.fixtureDir), experiment.manifestDir],
    manifestPath,
  });
  const runKey = await loadRunKey(
    options.stateDir ?? defaultStateDir(options.env ?? process.env),
    run.runManifest.evidence.runId,
  );
  const tempParent = options.tempParent ?? tmpdir();
  return {
    ...run,
    ...inputs,
    outDir,
    graders,
    contracts,
    notes,
    secretValues: secretValuesFromEnv(options.env ?? process.env),
    containment,
    runKey,
    tempParent,
    tempParents: [tempParent, await realpath(tempParent).catch(() => tempParent)],
  };
}

async function regradeHoldingLock(
  setup: RegradeSetup,
  options: RegradeOptions,
  startedAt: string,
): Promise<RegradeResult> {
  const { outDir, previous, tempParent } = setup;
  const signal = options.signal;
  const dirs = previous.trials.map((trial) => join(outDir, trial.artifactDir));
  // What a regrade killed mid-way left: its workspaces (noted in the trial folders), its
  // shared baselines (noted at the top of --out), its half-written verdict files, and the
  // checks it wrote for a verdict it never finished.
  for (const dir of [...dirs, outDir]) await removeAbandonedWorkspaces(dir, tempParent);
  await removeAtomicLeftovers(outDir);
  const { stem, validationFile } = await nextStem(outDir);
  const removeChecks = () =>
    Promise.all(dirs.map((dir) => rm(join(dir, validationFile), { force: true })));
  await removeChecks();

  const recorded = await readRecordedTrials(setup, dirs);
  let metrics: TrialMetrics[];
  try {
    metrics = await regradeTrials(setup, recorded, validationFile, options);
    signal?.throwIfAborted();
  } catch (error) {
    // Stopped (or broken) before the verdict: the checks written so far belong to no verdict.
    await removeChecks();
    throw error;
  }
  const { verdict, summary } = finishRegradeVerdict(setup, metrics, {
    startedAt,
    finishedAt: (options.now ?? (() => new Date()))().toISOString(),
  });
  if (signal?.aborted) {
    await removeChecks();
    signal.throwIfAborted();
  }
  // From here the verdict is written whole, even when a signal comes meanwhile.
  await writeVerdictFiles(outDir, verdict, stem, validationFile);
  return {
    stem,
    previous,
    verdict,
    changes: summary.changes,
    summary,
    contracts: setup.contracts,
    notes: setup.notes,
  };
}

/** Every recorded trial, read and checked (its seal, its place) before anything is written. */
async function readRecordedTrials(
  setup: RegradeSetup,
  dirs: readonly string[],
): Promise<RecordedTrial[]> {
  const { previous, runKey, experiment, outDir, runManifest, notes } = setup;
  const recorded: RecordedTrial[] = [];
  const unverified: InputProblem[] = [];
  for (const [index, trial] of previous.trials.entries()) {
    const dir = dirs[index] as string;
    const old = await parsed(join(dir, "metrics.json"), trialMetricsSchema, "trial metrics file");
    // Only what the run itself wrote is re-graded: a patch.diff or metrics.json changed in
    // --out since (by hand, or by code that reached it) must not become a verdict.
    const sealed = await verifyRecord(dir, old, runKey.ok ? runKey.key : undefined);
    if (!sealed.ok)
      unverified.push({
        path: trial.artifactDir,
        message: runKey.ok ? sealed.reason : `${sealed.reason}: ${runKey.reason}`,
      });
    if (
      old.variant !== trial.variant ||
      old.task !== trial.task ||
      old.trial !== trial.trial ||
      old.seq !== trial.seq
    )
      throw new InvalidInputError(join(dir, "metrics.json"), [
        {
          path: "(root)",
          message: `records trial ${old.trial} (seq ${old.seq}) of ${old.variant} on ${old.task}, but verdict.json puts trial ${trial.trial} (seq ${trial.seq}) of ${trial.variant} on ${trial.task} here`,
        },
      ]);
    const receiptValue = await readJsonFile(join(dir, "runtime-receipt.json")).catch(() => null);
    const receipt = receiptValue === null ? null : runtimeReceiptSchema.safeParse(receiptValue);
    const task = experiment.tasks.find((t) => t.id === trial.task);
    // A trial that never reached grading (infrastructure error before or during the run) keeps its
    // record, and so does one whose patch had secrets or paths masked: it no longer reproduces the trial's files.
    const gradable =
      task !== undefined &&
      receipt?.success === true &&
      (old.infraReason === null || old.infraReason === "grader_failed") &&
      !old.patchRedacted;
    recorded.push({ dir, old, regrade: gradable ? { task, receipt: receipt.data } : null });
    if (old.patchRedacted)
      notes.push(
        `${trial.artifactDir}: kept as recorded (its patch.diff had secrets or paths masked)`,
      );
  }
  if (unverified.length > 0)
    throw new InvalidInputError(
      outDir,
      unverified,
      `${unverified.length} trial record(s) are not the ones this run wrote, so they are not re-graded; \`${resumeCommand(outDir, runManifest.manifestPath)}\` runs them again`,
    );
  return recorded;
}

/** Grades every recorded trial again (several at once), each task's baseline shared. */
async function regradeTrials(
  setup: RegradeSetup,
  recorded: readonly RecordedTrial[],
  validationFile: string,
  options: RegradeOptions,
): Promise<TrialMetrics[]> {
  const signal = options.signal;
  const metrics: TrialMetrics[] = new Array(recorded.length);
  let done = 0;
  const concurrency = Math.max(1, options.concurrency ?? setup.runManifest.effective.concurrency);
  const baselines = shareBaselines({
    enabled: !setup.containment.record.unsafe,
    outDir: setup.outDir,
    tempParent: setup.tempParent,
    user: "regrade",
  });
  try {
    await runPool(
      recorded.map((_, index) => index),
      concurrency,
      async (index) => {
        if (signal?.aborted) return;
        const trial = recorded[index] as RecordedTrial;
        const snapshot = trial.regrade
          ? setup.fixtureSnapshots.get(trial.regrade.task.id)!
          : undefined;
        const result =
          trial.regrade && snapshot
            ? await regradeTrial(trial.dir, trial.old, trial.regrade, {
                graders: setup.graders.get(trial.regrade.task.id) ?? [],
                fixtureSnapshot: snapshot,
                baseline: await baselines.forTask(trial.regrade.task, snapshot),
                sandbox: setup.containment.sandbox,
                validationFile,
                tempParent: setup.tempParent,
                tempParents: setup.tempParents,
                secretValues: setup.secretValues,
                diskBudgetBytes: setup.experiment.diskBudgetBytes,
                ...(signal ? { signal } : {}),
              })
            : await keepTrial(trial.dir, trial.old, validationFile);
        if (result === null) return;
        metrics[index] = result;
        done += 1;
        options.onProgress?.(done, recorded.length);
      },
    );
  } finally {
    await baselines.dispose();
  }
  return metrics;
}

/** The new verdict on the regraded trials, with what changed since the run's. */
function finishRegradeVerdict(
  setup: RegradeSetup,
  metrics: readonly TrialMetrics[],
  times: { startedAt: string; finishedAt: string },
): { verdict: VerdictDocument; summary: RegradeSummary } {
  const { experiment, previous, partialRun, notes } = setup;
  const built = buildVerdictDocument({
    experiment,
    assembled: setup.assembled.variants,
    metrics,
    fixturesUnchanged: previous.fixturesUnchanged,
    evidence: { ...previous.evidence, fixtureHashes: setup.fixtureHashes },
    ...times,
    regradeOf: "verdict.json",
    retryLimit: previous.infraRetries.limit,
    containment: setup.containment.record,
  });
  if (partialRun && previous.fixturesUnchanged)
    Object.assign(built, stoppedEarlyStatus(experiment, metrics, partialRun, built));
  const summary = summarizeRegrade({
    before: previous.trials,
    after: built.trials,
    variants: experiment.variants.map((v) => v.id),
    baseline: experiment.baseline,
  });
  const methodChange = methodChangeOf(experiment, previous);
  if (methodChange)
    notes.push(
      `the run's verdict was decided by a method harnesslab no longer uses (${methodChange.previousMethod}, an interval alone): on the run's own grades the current method decides ${methodChange.statusWithPreviousGrades}, where the run said ${methodChange.previousStatus}; so the new verdict differs partly because of the method, not only because of the new grades`,
    );
  const verdict: VerdictDocument = {
    ...built,
    resumedTrials: previous.resumedTrials,
    cachedTrials: previous.cachedTrials,
    stoppedEarly: partialRun !== null,
    graderContracts: setup.contracts.map(({ runContractHash: _run, ...used }) => used),
    regradeSummary: methodChange ? { ...summary, methodChange } : summary,
  };
  return { verdict, summary };
}

/**
 * The status of a regraded run that stopped early, decided as the run decides it: when the new
 * grades still settle the status whatever the trials not run would show, that status. Otherwise
 * the run would not have stopped there, and the trials that ran cannot decide: need_more_work
 * (an infrastructure error stays one), and the reason says why.
 */
function stoppedEarlyStatus(
  experiment: Experiment,
  metrics: readonly TrialMetrics[],
  run: PartialRun,
  built: Pick<VerdictDocument, "status" | "reason">,
): Pick<VerdictDocument, "status" | "reason"> {
  const decision = stoppingDecision(experiment, metrics);
  if (decision.canStop && decision.status !== null)
    return {
      status: decision.status,
      reason: stoppedEarlyReason(run.ran, run.planned, decision.reason),
    };
  return {
    status: built.status === "infrastructure_error" ? built.status : "need_more_work",
    reason: `the run stopped early after ${run.ran} of ${run.planned} trials, but under the new grades the trials it did not run could change the status (${decision.reason}); run the experiment in full to decide. The trials that ran: ${built.reason}`,
  };
}

interface RecordedTrial {
  dir: string;
  old: TrialMetrics;
  /** Null when the trial keeps its record. */
  regrade: { task: TaskSpec; receipt: RuntimeReceipt } | null;
}

async function keepTrial(
  dir: string,
  old: TrialMetrics,
  validationFile: string,
): Promise<TrialMetrics> {
  // The new verdict's report reads its own validation file name: give it the recorded checks.
  await copyFile(join(dir, "validation.json"), join(dir, validationFile)).catch(() => {});
  return old;
}

interface RegradeTrialOptions {
  graders: readonly PreparedGrader[];
  fixtureSnapshot: TreeSnapshot;
  baseline: SharedBaseline | undefined;
  sandbox: CommandSandbox;
  validationFile: string;
  tempParent: string;
  /** `tempParent` and its real path: a workspace's directory may be named by either. */
  tempParents: readonly string[];
  /** Exact strings that must never reach an artifact (credential values from the environment). */
  secretValues: readonly string[];
  /** The experiment's disk budget, held to each grading copy as a run holds it. */
  diskBudgetBytes: number;
  signal?: AbortSignal;
}

/**
 * Grades one recorded trial again: its patch applied to a fresh fixture copy, the task's graders
 * run, the outcome classified with the recorded receipt. A patch that does not apply or a grader
 * that breaks makes this trial an infrastructure error, never the whole regrade. Null when the
 * regrade was stopped meanwhile: nothing is written then.
 */
async function regradeTrial(
  dir: string,
  old: TrialMetrics,
  { task, receipt }: { task: TaskSpec; receipt: RuntimeReceipt },
  options: RegradeTrialOptions,
): Promise<TrialMetrics | null> {
  const evidence: TrialEvidence = { receipt };
  let tempDir: string | undefined;
  const patch = await readFile(join(dir, "patch.diff"));
  const finalText = await readFile(join(dir, "response.txt"), "utf8").catch(() => "");
  // A forge trial is graded on the state the run captured after its agent (sealed with it).
  const forgeState = task.forge === undefined ? undefined : await recordedForgeState(dir);
  const graded = await gradePatch({
    task,
    graders: options.graders,
    fixtureSnapshot: options.fixtureSnapshot,
    ...(options.baseline ? { baseline: options.baseline } : {}),
    patch,
    changedFiles: old.changedFiles,
    finalText,
    ...(forgeState === undefined ? {} : { forgeState }),
    sandbox: options.sandbox,
    tempParent: options.tempParent,
    // Noted before the directory exists, so a regrade killed at any point leaves no
    // workspace the next regrade cannot find.
    beforeCreate: async (dirToCreate) => {
      tempDir = dirToCreate;
      await markWorkspace(dir, dirToCreate, "regrade");
    },
    ...(options.signal ? { signal: options.signal } : {}),
    diskBudgetBytes: options.diskBudgetBytes,
  });
  await unmarkWorkspaceIfGone(dir, tempDir, "regrade");
  const grades = graded.grades;
  evidence.grades = grades;
  const error = graded.harnessFailure?.message ?? null;
  if (graded.harnessFailure) evidence.harnessFailure = graded.harnessFailure;
  // A grader the stop cut short says nothing about the trial.
  if (options.signal?.aborted) return null;

  // As the run does: the workspace's paths become placeholders and credentials are masked.
  const scrubber = artifactScrubber({
    tempParents: options.tempParents,
    secretValues: options.secretValues,
    workspaceScrubs: () => [graded.scrubPaths],
  });
  const scrub = scrubber.text;
  const clean = scrubber.value;
  const classification = classifyTrial(evidence);
  const cleanGrades = clean(grades) as Grade[];
  await writeFile(
    join(dir, options.validationFile),
    `${JSON.stringify({ schemaVersion: VALIDATION_VERSION, grades: cleanGrades, error: error === null ? null : scrub(error) }, null, 2)}\n`,
  );
  return {
    ...old,
    outcome: classification.outcome,
    infraReason: classification.infraReason,
    explanation: scrub(classification.explanation),
    score: classification.score,
    gradePassed: classification.gradePassed,
    graders: graderResults(cleanGrades),
  };
}

/** The trial's `forge-after.json`, when it holds a valid state (the graders say when it does not). */
async function recordedForgeState(dir: string): Promise<RepoState | undefined> {
  const value = await readJsonFile(join(dir, "forge-after.json")).catch(() => undefined);
  if (value === undefined) return undefined;
  const validated = validateRepoState(value);
  return validated.ok ? validated.value : undefined;
}

function parseContractArgs(values: readonly string[], cwd = process.cwd()): GraderContractArg[] {
  const args: GraderContractArg[] = [];
  const problems: InputProblem[] = [];
  for (const value of values) {
    const parsedArg = parseGraderContractArg(value);
    if (parsedArg.ok) args.push({ ...parsedArg.value, file: resolve(cwd, parsedArg.value.file) });
    else problems.push(...parsedArg.problems);
  }
  if (problems.length > 0)
    throw new InvalidInputError(
      "--grader-contract",
      problems,
      "cannot re-grade with these contracts",
    );
  return args;
}

/** Reads every given contract once up front, so a bad one is reported as the option's fault. */
async function checkContractFiles(overrides: readonly ContractOverride[]): Promise<void> {
  for (const override of overrides) {
    try {
      await loadReadmeContract(override.file);
    } catch (error) {
      if (!(error instanceof InvalidInputError)) throw error;
      throw new InvalidInputError(
        override.file,
        error.problems,
        `cannot use the contract given with --grader-contract ${override.given}`,
      );
    }
  }
}

/** The contract each contract-taking grader grades with, beside the one the run used. */
async function describeContracts(
  outDir: string,
  tasks: readonly TaskSpec[],
  prepared: ReadonlyMap<string, readonly PreparedGrader[]>,
  overrides: readonly ContractOverride[],
): Promise<RegradeContract[]> {
  const frozen = await readValidJsonFile(join(outDir, "frozen-task.json"), frozenTasksSchema);
  const contracts: RegradeContract[] = [];
  for (const task of tasks) {
    for (const spec of task.graders) {
      const hash = prepared.get(task.id)?.find((g) => g.id === spec.id)?.contractHash ?? null;
      if (hash === null || spec.kind !== "readme-package-v1") continue;
      const recorded = frozen
        ? frozen.tasks.find((t) => t.id === task.id)?.graders.find((g) => g.id === spec.id)
        : undefined;
      contracts.push({
        task: task.id,
        grader: spec.id,
        path: spec.contractFile,
        contractHash: hash,
        source: overrides.some((o) => o.task === task.id && o.grader === spec.id)
          ? "option"
          : "manifest",
        runContractHash: recorded?.contractHash ?? null,
      });
    }
  }
  return contracts;
}

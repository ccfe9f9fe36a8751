// The comparison runner (I/O): assemble, freeze the tasks, run every planned trial in its
// own workspace (several at once when asked), re-check the fixtures, decide the verdict
// and write every artifact under --out (docs/artifacts.md). Judging and writing the verdict
// live in verdict.ts, what --resume may reuse in resume.ts, one trial in trial.ts.

import { mkdir, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import {
  type BudgetStop,
  FROZEN_TASK_VERSION,
  type FrozenTasks,
  RUN_MANIFEST_VERSION,
  type RunManifest,
  TOOL_USE_VERSION,
  TRIAL_METRICS_VERSION,
  type TrialAttempt,
  type TrialMetrics,
  VALIDATION_VERSION,
  type VerdictDocument,
} from "../../artifacts/index.js";
import {
  type Executor,
  executorsByHost,
  type HostId,
  permissionDecisionsDocument,
  redactText,
  secretValuesFromEnv,
} from "../../exec/index.js";
import { canonicalJson, sha256Hex } from "../../ir/index.js";
import type { CommandSandbox } from "../../sandbox/index.js";
import { runPool, writeFileAtomic } from "../../shared/index.js";
import type { StoppingDecision } from "../../stats/index.js";
import { isDiskFull, snapshotTree, type TreeSnapshot } from "../../workspace/index.js";
import { ExperimentInputError } from "../errors.js";
import {
  createRunKey,
  defaultStateDir,
  type RunKey,
  STATE_DIR_VARIABLE,
  sealRecord,
} from "../evidence/record-seal.js";
import {
  buildVerdictDocument,
  stoppingCheck,
  stopsBySequentialDesign,
  writeVerdictFiles,
} from "../evidence/verdict.js";
import { type Experiment, runtimeOf, type TrialJob } from "../experiment.js";
import { fixtureOverlaps, foldersOverlap } from "../manifest/out-dir.js";
import { runTrial } from "../trial/trial.js";
import { stoppedEarlyReason } from "../trial/trial-record.js";
import { shareBaselines } from "./baselines.js";
import { type BudgetLimits, budgetReached, describeBudgetStop } from "./budget.js";
import { planTrials, trialArtifactDir } from "./plan.js";
import { type Prepared, prepareOrThrow } from "./preflight.js";
import {
  clearLeftovers,
  collectResumable,
  hashAgents,
  type RejectedRecord,
  setAsideRejected,
} from "./resume.js";
import {
  archiveAttempt,
  isRetryableInfraError,
  prepareTrialFolder,
  retryDelayMs,
} from "./retry.js";
import { describeRunInputs, graderSettings } from "./run-inputs.js";
import { createRunLock, type RunLock } from "./run-lock.js";
import {
  agentContentHash,
  storeCachedTrials,
  type TrialCache,
  type TrialContent,
  takeCachedTrials,
  trialContentKey,
} from "./trial-cache.js";

const packageVersion = (
  createRequire(import.meta.url)("../../../package.json") as { version: string }
).version;

const DEFAULT_RETRY_BACKOFF_MS = 2_000;

export interface RunProgress {
  done: number;
  total: number;
  passed: number;
  failed: number;
  infraErrors: number;
  elapsedMs: number;
  /** Estimated time left, from the mean trial time and the concurrency; null before the first trial ends. */
  etaMs: number | null;
  /** The trial that just finished. */
  last?: TrialMetrics;
  /** Trials taken from an earlier run (--resume). */
  reused: number;
  /** Finished trials that needed more than one attempt (--retry-infra). */
  retried: number;
}

export interface RunExperimentOptions {
  /** Where artifacts go; must be empty or absent (unless resuming) and must not overlap a fixture. */
  outDir: string;
  /** The manifest document as loaded, stored in manifest.json. */
  manifestDocument: unknown;
  /** Hex sha256 of the manifest file's bytes. */
  manifestHash: string;
  /** Overrides the manifest's concurrency. */
  concurrency?: number;
  /** Re-use the finished trials already under outDir (same manifest and harness) and run the rest. */
  resume?: boolean;
  /**
   * Run a trial again, up to this many times, when it ends in an infrastructure error that may
   * pass on another attempt (not a missing credential, binary or runtime, an invalid
   * configuration or an interruption). Every attempt's files are kept. Default 0.
   */
  retryInfra?: number;
  /** First wait before retrying a rate limit or network error, doubled per attempt (default 2000 ms). */
  retryBackoffMs?: number;
  /** The executor for a host (asked once per host the variants use); the seam where tests put a fake SDK. */
  executorFor: (host: HostId) => Executor;
  onProgress?: (progress: RunProgress) => void;
  /** Told what the run waits for (free disk space) while it waits, for a person. */
  onNotice?: (line: string) => void;
  signal?: AbortSignal;
  /** Parent of the trials' temporary directories (default: the OS temp directory). */
  tempParent?: string;
  /**
   * Stop starting trials once no outcome of the remaining ones can change the verdict's
   * status (sequential stopping; trials already running finish). Off by default.
   */
  stopEarly?: boolean;
  /**
   * Stop starting trials once the next one could take the USD (or tokens) every recorded trial
   * used past this limit; the verdict then says the budget decided (`budgetStop`).
   */
  budget?: BudgetLimits;
  /** How long past its timeout an executor may take to return before its trial is abandoned (default 30 s). */
  executorGraceMs?: number;
  /** Wall clock for startedAt/finishedAt. */
  now?: () => Date;
  /** Environment whose credential values must never reach an artifact (default: process.env). */
  env?: NodeJS.ProcessEnv;
  /**
   * Run the trials' commands without an OS sandbox (--unsafe-no-sandbox): code the agent wrote
   * then runs with the harness's user, files and network, and the verdict says so first.
   */
  unsafeNoSandbox?: boolean;
  /** A sandbox of the caller's own (otherwise bubblewrap is used when it can start here). */
  sandbox?: CommandSandbox;
  /** Where the run's record key is kept (default: $HARNESSLAB_STATE_DIR or the user's state directory). */
  stateDir?: string;
  /** Live mode: keep each trial's throwaway repository instead of deleting it (--keep-forge-repos). */
  keepForgeRepos?: boolean;
  /**
   * Check before the first trial that the runtime host can start here (its SDK installed,
   * credentials set, a configured endpoint answering), and stop with what to do if not.
   */
  checkHost?: boolean;
  /** Where the trials run (default: here, in this process's pool); a queue's coordinator gives its own. */
  trialPlace?: TrialPlaceFactory;
  /**
   * Take the trials of these variants from a trial cache when it holds sealed trials of the same
   * setup on the same task, and keep the ones this run makes there (`harness ci --cache`).
   */
  trialCache?: TrialCache;
}

export interface RunExperimentResult {
  verdict: VerdictDocument;
  outDir: string;
}

async function snapshotFixtures(experiment: Experiment): Promise<Map<string, TreeSnapshot>> {
  const snapshots = new Map<string, TreeSnapshot>();
  for (const task of experiment.tasks) {
    try {
      snapshots.set(task.id, await snapshotTree(task.fixtureDir));
    } catch (error) {
      throw new ExperimentInputError(experiment.manifestPath, [
        { path: `${task.manifestField}.fixture`, message: (error as Error).message },
      ]);
    }
  }
  return snapshots;
}

function fixtureHashes(snapshots: Map<string, TreeSnapshot>): Record<string, string> {
  return Object.fromEntries([...snapshots].map(([task, snapshot]) => [task, snapshot.hash]));
}

/**
 * Runs an experiment end to end. Input problems found before the first trial throw
 * ExperimentInputError (nothing is written); everything after that is recorded, and one
 * trial's failure never stops the run.
 */
export async function runExperiment(
  experiment: Experiment,
  options: RunExperimentOptions,
): Promise<RunExperimentResult> {
  // One run at a time in --out: a second run or resume there is refused while the first lives.
  const lock = createRunLock(resolve(options.outDir), {
    takeOverStale: options.resume === true,
    manifestPath: experiment.manifestPath,
  });
  await lock.assertNotHeldByLiveRun();
  try {
    return await runHoldingLock(experiment, options, lock);
  } finally {
    await lock.release();
  }
}

/** The run itself; it takes `lock` once the inputs are checked, before its first write. */
async function runHoldingLock(
  experiment: Experiment,
  options: RunExperimentOptions,
  lock: RunLock,
): Promise<RunExperimentResult> {
  const inputs = await checkInputs(experiment, options);
  if (options.trialCache !== undefined)
    await assertCacheApart(options.trialCache.dir, inputs.outDir, experiment);
  const record = describeRun(experiment, options, inputs);
  const earlier = await takeEarlierRun(experiment, options, inputs, record);
  await lock.acquire();
  const rejectedRecords = await beginWriting(experiment, options, inputs, record, earlier);
  const cache =
    options.trialCache === undefined
      ? undefined
      : await takeFromCache(experiment, options, options.trialCache, inputs, record, earlier);
  const ran = await runTrials(experiment, options, inputs, earlier);
  if (cache !== undefined) await keepInCache(experiment, options, cache, inputs, earlier, ran);
  const verdict = await finishVerdict(experiment, options, inputs, record, earlier, ran);
  verdict.rejectedRecords = rejectedRecords;
  await writeVerdictFiles(inputs.outDir, verdict);
  return { verdict, outDir: inputs.outDir };
}

/** What the run is made of once its inputs are checked; nothing is written yet. */
interface CheckedRun {
  outDir: string;
  startedAt: string;
  /** performance.now() at the start, for the progress line's times. */
  started: number;
  prepared: Prepared;
  /** Each task's fixture as snapshotted before the first trial: what every trial starts from. */
  before: Map<string, TreeSnapshot>;
  jobs: TrialJob[];
  agentHashes: Record<string, string | null>;
  stateDir: string;
}

async function checkInputs(
  experiment: Experiment,
  options: RunExperimentOptions,
): Promise<CheckedRun> {
  const startedAt = (options.now ?? (() => new Date()))().toISOString();
  const started = performance.now();
  const outDir = resolve(options.outDir);
  const prepared = await prepareOrThrow(experiment, {
    outDir,
    ...(options.resume ? { resume: true } : {}),
    ...(options.unsafeNoSandbox ? { unsafeNoSandbox: true } : {}),
    ...(options.sandbox ? { sandbox: options.sandbox } : {}),
    ...(options.checkHost ? { checkHost: true } : {}),
    ...(options.env ? { env: options.env } : {}),
  });
  return {
    outDir,
    startedAt,
    started,
    prepared,
    before: await snapshotFixtures(experiment),
    jobs: planTrials(experiment),
    agentHashes: await hashAgents(experiment),
    stateDir: options.stateDir ?? defaultStateDir(options.env ?? process.env),
  };
}

/** manifest.json and frozen-task.json as this run writes them, and the verdict's evidence. */
interface RunRecord {
  runManifest: RunManifest;
  frozen: FrozenTasks;
  evidence: VerdictDocument["evidence"];
}

function describeRun(
  experiment: Experiment,
  options: RunExperimentOptions,
  inputs: CheckedRun,
): RunRecord {
  const { prepared, before, jobs, agentHashes } = inputs;
  const evidence: VerdictDocument["evidence"] = {
    manifestHash: `sha256:${options.manifestHash.replace(/^sha256:/, "")}`,
    harnessHash: prepared.harnessHash,
    fixtureHashes: fixtureHashes(before),
  };
  const runManifest: RunManifest = {
    schemaVersion: RUN_MANIFEST_VERSION,
    manifestPath: experiment.manifestPath,
    manifest: options.manifestDocument,
    effective: {
      trials: experiment.trials.count,
      concurrency: options.concurrency ?? experiment.concurrency,
      retryInfra: options.retryInfra ?? 0,
      host: experiment.runtime.host,
      verdictPolicy: experiment.verdict,
      ...(experiment.calibration ? { calibrate: true } : {}),
    },
    evidence: {
      ...evidence,
      agentHashes,
      revisions: Object.fromEntries(
        [...prepared.variants].map(([id, v]) => [id, v.revision.revisionId]),
      ),
      executionOrder: jobs.map((j) => ({
        seq: j.seq,
        task: j.task,
        variant: j.variant,
        trial: j.trialIndex,
      })),
    },
    harnesslabVersion: packageVersion,
    nodeVersion: process.version,
    platform: process.platform,
  };
  const frozen = freezeTasks(experiment, prepared, before);
  // Everything a finished trial depended on; --resume reuses trials only when it is unchanged.
  runManifest.evidence.inputsHash = `sha256:${sha256Hex(
    canonicalJson({
      evidence,
      agentHashes,
      tasks: frozen.tasks.map(({ fixtureFiles: _files, ...task }) => task),
      graders: experiment.tasks.map((t) => t.graders.map(graderSettings)),
      runtime: experiment.runtime,
      verdict: experiment.verdict,
      trials: experiment.trials,
      // Absent for experiments without forge tasks, so their inputs hash is what it was.
      ...(experiment.forge === undefined ? {} : { forge: experiment.forge }),
    }),
  )}`;
  runManifest.evidence.inputs = describeRunInputs({
    experiment,
    manifestHash: evidence.manifestHash,
    harnessHash: evidence.harnessHash,
    fixtureHashes: evidence.fixtureHashes,
    agentHashes,
    contractHashes: new Map(
      [...prepared.graders].map(([task, list]) => [
        task,
        new Map(list.map((g) => [g.id, g.contractHash])),
      ]),
    ),
    containment: prepared.containment.record.kind,
  });
  runManifest.evidence.containment = prepared.containment.record;
  return { runManifest, frozen, evidence };
}

function freezeTasks(
  experiment: Experiment,
  prepared: Prepared,
  before: Map<string, TreeSnapshot>,
): FrozenTasks {
  return {
    schemaVersion: FROZEN_TASK_VERSION,
    tasks: experiment.tasks.map((task) => {
      const snapshot = before.get(task.id)!;
      return {
        id: task.id,
        prompt: task.prompt,
        promptHash: `sha256:${sha256Hex(task.prompt)}`,
        fixtureHash: snapshot.hash,
        fixtureFiles: snapshot.files.map((f) => ({
          path: f.path,
          kind: f.kind === "dir" ? "dir" : "file",
          bytes: f.bytes,
          sha256: f.sha256,
        })),
        expectedFiles: task.expectedFiles,
        graders: (prepared.graders.get(task.id) ?? []).map((g) => ({
          id: g.id,
          kind: g.kind,
          contractHash: g.contractHash,
        })),
        ...(task.forge === undefined
          ? {}
          : {
              forge: {
                seedHash: `sha256:${sha256Hex(canonicalJson(task.forge.seed))}`,
                repo: task.forge.repo,
                issues: task.forge.seed.issues?.length ?? 0,
                pullRequests: task.forge.seed.pullRequests?.length ?? 0,
              },
            }),
        ...(task.tier === undefined ? {} : { tier: task.tier }),
      };
    }),
  };
}

/** What an earlier run in --out gives this one (--resume), and the run's record key. */
interface EarlierRun {
  /** Finished trials this run does not run: taken over by --resume, then from the trial cache. */
  reusable: Map<number, TrialMetrics>;
  /** How many of `reusable` --resume took over. */
  resumed: number;
  rejected: RejectedRecord[];
  runKey: RunKey;
}

async function takeEarlierRun(
  experiment: Experiment,
  options: RunExperimentOptions,
  inputs: CheckedRun,
  record: RunRecord,
): Promise<EarlierRun> {
  const reusable = new Map<number, TrialMetrics>();
  const resumed = options.resume
    ? await collectResumable(
        inputs.outDir,
        experiment,
        inputs.jobs,
        record.runManifest,
        reusable,
        options.retryInfra ?? 0,
        record.frozen,
        inputs.stateDir,
      )
    : undefined;
  const runKey = resumed?.runKey ?? (await newRunKey(inputs.stateDir, experiment.manifestPath));
  record.runManifest.evidence.runId = runKey.runId;
  // A resumed trial that came from the trial cache is counted with the cache's.
  const fromRun = [...reusable.values()].filter((m) => m.cachedFrom === undefined).length;
  return { reusable, resumed: fromRun, rejected: resumed?.rejected ?? [], runKey };
}

/** The trial cache as this run uses it: the content key of each cached variant's trial on each task. */
interface CacheUse {
  cache: TrialCache;
  contentKeys: Map<string, string>;
  contents: Map<string, TrialContent>;
}

/**
 * Takes the cached variants' trials the cache holds (sealed, of the same content) into
 * `earlier.reusable`, copied into --out and sealed with the run's key; says what it took and
 * which entries it ignored.
 */
async function takeFromCache(
  experiment: Experiment,
  options: RunExperimentOptions,
  cache: TrialCache,
  inputs: CheckedRun,
  record: RunRecord,
  earlier: EarlierRun,
): Promise<CacheUse> {
  const { prepared } = inputs;
  const contentKeys = new Map<string, string>();
  const contents = new Map<string, TrialContent>();
  for (const variantId of cache.variants) {
    const assembled = prepared.variants.get(variantId);
    if (assembled === undefined) continue;
    const agentHash = await agentContentHash(
      experiment.variants.find((v) => v.id === variantId)?.agent,
    );
    for (const task of experiment.tasks) {
      const taskInputs = record.runManifest.evidence.inputs?.tasks[task.id];
      if (taskInputs === undefined) continue;
      const content: TrialContent = {
        harnesslabVersion: packageVersion,
        setupHash: assembled.setupHash,
        revisionId: assembled.revision.revisionId,
        agentHash,
        runtime: runtimeOf(experiment, variantId),
        task: taskInputs,
        containment: prepared.containment.record.kind,
        diskBudgetBytes: experiment.diskBudgetBytes,
        forge: experiment.forge ?? null,
      };
      const key = trialContentKey(content);
      contentKeys.set(`${variantId}\0${task.id}`, key);
      contents.set(key, content);
    }
  }
  const used = new Set(
    [...earlier.reusable.values()].flatMap((m) => (m.cachedFrom ? [m.cachedFrom.entry] : [])),
  );
  const { taken, ignored } = await takeCachedTrials({
    cache,
    experiment,
    pending: inputs.jobs.filter((job) => !earlier.reusable.has(job.seq)),
    contentKeys,
    used,
    runId: earlier.runKey.runId,
    outDir: inputs.outDir,
    seal: (artifactDir, metrics) => sealTrial(artifactDir, metrics, earlier.runKey),
  });
  for (const [seq, metrics] of taken) earlier.reusable.set(seq, metrics);
  const wanted = inputs.jobs.filter((job) => cache.variants.includes(job.variant)).length;
  const say = options.onNotice ?? (() => {});
  say(
    `trial cache: ${taken.size} of the ${wanted} trial(s) of ${cache.variants.join(", ")} taken from ${cache.dir}`,
  );
  for (const entry of ignored.slice(0, MAX_IGNORED_SHOWN))
    say(`trial cache: ignored ${entry.entry}: ${entry.reason}`);
  if (ignored.length > MAX_IGNORED_SHOWN)
    say(`trial cache: ignored ${ignored.length - MAX_IGNORED_SHOWN} more entries`);
  return { cache, contentKeys, contents };
}

const MAX_IGNORED_SHOWN = 5;

/** The trial cache is neither in a fixture (which must never change) nor in --out, nor holds either. */
async function assertCacheApart(
  dir: string,
  outDir: string,
  experiment: Experiment,
): Promise<void> {
  const problems = await fixtureOverlaps(dir, experiment, "--cache", "keep the trial cache");
  const [cache, out] = [resolve(dir), resolve(outDir)];
  if (await foldersOverlap(cache, out))
    problems.push({
      path: "--cache",
      message: `${cache} and --out (${out}) overlap; keep the trial cache apart from the run's evidence`,
    });
  if (problems.length > 0)
    throw new ExperimentInputError(
      experiment.manifestPath,
      problems,
      "cannot use this trial cache",
    );
}

/** Keeps the cached variants' trials this run made in the cache; a cache it cannot write only warns. */
async function keepInCache(
  experiment: Experiment,
  options: RunExperimentOptions,
  use: CacheUse,
  inputs: CheckedRun,
  earlier: EarlierRun,
  ran: TrialsRan,
): Promise<void> {
  const { stored, failures } = await storeCachedTrials({
    cache: use.cache,
    experiment,
    metrics: ran.metrics,
    contentKeys: use.contentKeys,
    contents: use.contents,
    runId: earlier.runKey.runId,
    outDir: inputs.outDir,
  });
  const say = options.onNotice ?? (() => {});
  if (stored > 0) say(`trial cache: kept ${stored} new trial(s) in ${use.cache.dir}`);
  for (const failure of failures) say(`trial cache: could not keep ${failure}`);
}

/** The run's first writes: what a killed run left is cleared, the run's records written. */
async function beginWriting(
  experiment: Experiment,
  options: RunExperimentOptions,
  inputs: CheckedRun,
  record: RunRecord,
  earlier: EarlierRun,
): Promise<VerdictDocument["rejectedRecords"]> {
  const { outDir, jobs } = inputs;
  const rejectedRecords = await setAsideRejected(outDir, earlier.rejected);
  // What a run killed mid-way left: its trials' temporary workspaces and half-written files.
  if (options.resume)
    await clearLeftovers(outDir, experiment, jobs, options.tempParent ?? tmpdir());
  await writeFileAtomic(
    join(outDir, "manifest.json"),
    `${JSON.stringify(record.runManifest, null, 2)}\n`,
  );
  await writeFileAtomic(
    join(outDir, "frozen-task.json"),
    `${JSON.stringify(record.frozen, null, 2)}\n`,
  );
  // A resume that runs trials again makes the earlier verdict stale: until the new one is
  // written, the directory must not look like a finished run (to regrade, report or a reader).
  if (options.resume && earlier.reusable.size < jobs.length)
    await Promise.all(
      ["verdict.json", "verdict.md", "verdict.html"].map((name) =>
        rm(join(outDir, name), { force: true }),
      ),
    );
  return rejectedRecords;
}

/**
 * One attempt of a trial, from its job to its folder with every file but metrics.json: run here
 * (`runTrial`) or by a queue's worker. Resolves to the attempt's unsealed metrics (`run_aborted`
 * when the run's signal cut it short), or to null when the attempt never ran here (the place
 * withdrew it, or left its result for --resume); it may throw, which records the attempt as a
 * harness error.
 */
type TrialAttemptRunner = (
  job: TrialJob,
  artifactDir: string,
  retriedAttempts: TrialAttempt[],
) => Promise<TrialMetrics | null>;

/** Where the run's trials run: `attempt` for each, `close` once the run is done with them. */
interface TrialPlace {
  attempt: TrialAttemptRunner;
  /** Trials the place may run at once, when it decides (a queue: every pending trial). */
  concurrency?: number;
  /** Called when the run stops starting trials (stopped early, over budget, interrupted). */
  stopStarting?: () => Promise<void>;
  close(): Promise<void>;
}

/** Builds the place a run's trials run in (the seam for a queue; the default runs them here). */
export type TrialPlaceFactory = (setup: TrialPlaceSetup) => Promise<TrialPlace>;

interface TrialPlaceSetup {
  experiment: Experiment;
  options: RunExperimentOptions;
  inputs: CheckedRun;
  runKey: RunKey;
  secretValues: readonly string[];
  /** The run's signal: the caller's, or the place's own stop. */
  signal: AbortSignal;
  /** Stops the run as an interruption would, saying why (the run stays resumable). */
  stopRun(reason: string): void;
}

/** Runs each trial in a workspace of this machine, sharing each task's baseline. */
const localTrials: TrialPlaceFactory = async ({
  experiment,
  options,
  inputs,
  secretValues,
  signal,
}) => {
  const { prepared, before, outDir } = inputs;
  const executorFor = executorsByHost(options.executorFor);
  const baselines = shareBaselines({
    enabled: !prepared.containment.record.unsafe,
    outDir,
    tempParent: options.tempParent ?? tmpdir(),
    user: "run",
  });
  return {
    attempt: async (job, artifactDir, retriedAttempts) => {
      const task = experiment.tasks.find((t) => t.id === job.task)!;
      const variant = experiment.variants.find((v) => v.id === job.variant)!;
      const baseline = await baselines.forTask(task, before.get(task.id)!);
      return runTrial({
        experiment,
        fixtureSnapshot: before.get(task.id)!,
        task,
        variant,
        assembled: prepared.variants.get(variant.id)!,
        graders: prepared.graders.get(task.id) ?? [],
        executor: executorFor(runtimeOf(experiment, variant).host),
        job,
        artifactDir,
        secretValues,
        sandbox: prepared.containment.sandbox,
        retriedAttempts,
        ...(baseline ? { baseline } : {}),
        env: options.env ?? process.env,
        ...(options.keepForgeRepos ? { keepForgeRepos: true } : {}),
        ...(options.onNotice ? { onNotice: options.onNotice } : {}),
        signal,
        ...(options.tempParent ? { tempParent: options.tempParent } : {}),
        ...(options.executorGraceMs === undefined
          ? {}
          : { executorGraceMs: options.executorGraceMs }),
      });
    },
    close: () => baselines.dispose(),
  };
};

/** The trials the run recorded, and why it stopped starting more (when it did). */
interface TrialsRan {
  metrics: TrialMetrics[];
  /** Set when the run was interrupted: by the user (no reason) or by its trials' place. */
  interrupted: { reason?: string } | undefined;
  settled: StoppingDecision | undefined;
  budgetStop: BudgetStop | null;
}

/**
 * Runs every pending trial (several at once when asked), each with its retries, in planned
 * order; stops starting trials once the status is settled (--stop-early, the sequential design),
 * the budget could be passed, or the run is interrupted.
 */
async function runTrials(
  experiment: Experiment,
  options: RunExperimentOptions,
  inputs: CheckedRun,
  earlier: EarlierRun,
): Promise<TrialsRan> {
  const { jobs, outDir } = inputs;
  const metrics: TrialMetrics[] = [...earlier.reusable.values()];
  const secretValues = secretValuesFromEnv(options.env ?? process.env);
  const halt = new AbortController();
  let haltReason: string | undefined;
  const signal = options.signal ? AbortSignal.any([options.signal, halt.signal]) : halt.signal;
  const place = await (options.trialPlace ?? localTrials)({
    experiment,
    options,
    inputs,
    runKey: earlier.runKey,
    secretValues,
    signal,
    stopRun: (reason) => {
      haltReason ??= reason;
      halt.abort(new Error(reason));
    },
  });
  const pending = jobs.filter((job) => !earlier.reusable.has(job.seq));
  const concurrency = options.concurrency ?? place.concurrency ?? experiment.concurrency;
  // A place that decides for itself how many trials run at once (a queue's workers) is timed by
  // its throughput; here, by the trials' own durations over the trials running at once.
  const progress = startProgress(
    metrics,
    jobs.length,
    place.concurrency === undefined ? concurrency : undefined,
    inputs.started,
  );
  options.onProgress?.(progress.current());
  const recorder: AttemptRecorder = {
    attempt: place.attempt,
    runKey: earlier.runKey,
    secretValues,
    signal,
  };
  const retries: RetrySettings = {
    limit: options.retryInfra ?? 0,
    backoffMs: options.retryBackoffMs ?? DEFAULT_RETRY_BACKOFF_MS,
    signal,
  };

  // Sequential stopping: once no outcome of the remaining trials can change the status (opt-in
  // with --stop-early), or once the sequential design crosses a boundary, the trials not yet
  // started are skipped.
  let settled: StoppingDecision | undefined;
  const stops = options.stopEarly === true || stopsBySequentialDesign(experiment);
  const stopCheck = stops ? stoppingCheck(experiment) : undefined;
  const settle = () => {
    if (stopCheck === undefined || settled !== undefined) return;
    const decision = stopCheck.check(metrics);
    if (decision?.canStop) settled = decision;
  };
  settle();
  // Budgets (opt-in): a trial starts only if it could not take the spending past a limit.
  let running = 0;
  let budgetStop = null as BudgetStop | null;
  const overBudget = () => {
    if (options.budget === undefined) return false;
    budgetStop ??= budgetReached(options.budget, metrics, running, jobs.length);
    return budgetStop !== null;
  };
  const stopping = () => signal.aborted || settled !== undefined;
  let stoppedStarting: Promise<void> | undefined;
  const stopStarting = () => {
    stoppedStarting ??= (place.stopStarting?.() ?? Promise.resolve()).catch(() => {});
    return stoppedStarting;
  };
  const onAbort = () => void stopStarting();
  signal.addEventListener("abort", onAbort, { once: true });

  const runJob = async (job: TrialJob) => {
    if (stopping()) return;
    const artifactDir = join(
      outDir,
      trialArtifactDir(experiment, job.variant, job.task, job.trialIndex),
    );
    // A resumed trial keeps the attempts it already made; anything else in its folder goes.
    const attempts = await prepareTrialFolder(artifactDir);
    const result = await runTrialWithRetries(artifactDir, job, retries, attempts, recorder);
    // An interrupted (or withdrawn) trial wrote no record (the recorder and the retry loop see to
    // it): it stays unfinished, and --resume runs it again.
    if (result === null || (signal.aborted && result.infraReason === "run_aborted")) return;
    metrics.push(result);
    settle();
    options.onProgress?.(progress.finished(result));
    if (stopping()) await stopStarting();
  };
  try {
    await runPool(pending, concurrency, async (job) => {
      if (overBudget()) return;
      running += 1;
      await runJob(job).finally(() => {
        running -= 1;
      });
    });
  } finally {
    signal.removeEventListener("abort", onAbort);
    await stoppedStarting;
    await place.close();
  }
  const interrupted = signal.aborted
    ? haltReason === undefined
      ? {}
      : { reason: haltReason }
    : undefined;
  return { metrics, interrupted, settled, budgetStop };
}

/**
 * How long the remaining trials should take. With a known number of trials at once: the mean
 * duration of the trials that ran, times the remaining ones, over the trials running at once.
 * Without it (a queue's workers): the run's own pace so far.
 */
export function estimateRemainingMs(seen: {
  elapsedMs: number;
  /** Trials that ran in this process, and their summed durations. */
  ran: number;
  ranMs: number;
  remaining: number;
  concurrency: number | undefined;
}): number {
  const { elapsedMs, ran, ranMs, remaining, concurrency } = seen;
  if (ran === 0 || remaining <= 0) return 0;
  if (concurrency === undefined) return Math.round((elapsedMs / ran) * remaining);
  return Math.round(((ranMs / ran) * remaining) / Math.max(1, Math.min(concurrency, remaining)));
}

/** The progress line's counts, updated as trials finish. */
function startProgress(
  metrics: readonly TrialMetrics[],
  total: number,
  concurrency: number | undefined,
  started: number,
): { current(): RunProgress; finished(last: TrialMetrics): RunProgress } {
  const progress: RunProgress = {
    done: metrics.length,
    total,
    passed: metrics.filter((m) => m.outcome === "passed").length,
    failed: metrics.filter((m) => m.outcome === "failed").length,
    infraErrors: metrics.filter((m) => m.outcome === "infrastructure_error").length,
    elapsedMs: 0,
    etaMs: null,
    reused: metrics.length,
    retried: 0,
  };
  let ran = 0;
  let ranMs = 0;
  return {
    current: () => ({ ...progress }),
    finished: (last) => {
      ran += 1;
      ranMs += last.durationMs;
      if (last.retriedAttempts.length > 0) progress.retried += 1;
      progress.done += 1;
      if (last.outcome === "passed") progress.passed += 1;
      else if (last.outcome === "failed") progress.failed += 1;
      else progress.infraErrors += 1;
      progress.elapsedMs = Math.round(performance.now() - started);
      progress.etaMs = estimateRemainingMs({
        elapsedMs: progress.elapsedMs,
        ran,
        ranMs,
        remaining: progress.total - progress.done,
        concurrency,
      });
      return { ...progress, last };
    },
  };
}

/** The verdict on the trials that ran, with why the run stopped when it did not run them all. */
async function finishVerdict(
  experiment: Experiment,
  options: RunExperimentOptions,
  inputs: CheckedRun,
  record: RunRecord,
  earlier: EarlierRun,
  ran: TrialsRan,
): Promise<VerdictDocument> {
  const { before, jobs, prepared } = inputs;
  const { metrics, settled, budgetStop } = ran;
  const after = await snapshotFixtures(experiment).catch(() => new Map<string, TreeSnapshot>());
  // A fixture changed and restored mid-run is seen by the trial whose copy differed.
  const fixturesUnchanged =
    experiment.tasks.every((t) => after.get(t.id)?.hash === before.get(t.id)?.hash) &&
    !metrics.some((m) => m.infraReason === "fixture_changed");
  const verdict = buildVerdictDocument({
    experiment,
    assembled: prepared.variants,
    metrics,
    fixturesUnchanged,
    evidence: record.evidence,
    startedAt: inputs.startedAt,
    finishedAt: (options.now ?? (() => new Date()))().toISOString(),
    retryLimit: options.retryInfra ?? 0,
    containment: prepared.containment.record,
  });
  verdict.resumedTrials = earlier.resumed;
  verdict.cachedTrials = metrics.filter((m) => m.cachedFrom !== undefined).length;
  const { interrupted } = ran;
  if (interrupted !== undefined && metrics.length < jobs.length) {
    verdict.interrupted = true;
    verdict.status = "infrastructure_error";
    verdict.reason =
      interrupted.reason === undefined
        ? `the run was interrupted after ${metrics.length} of ${jobs.length} trials; run again with --resume to finish it`
        : `the run stopped after ${metrics.length} of ${jobs.length} trials: ${interrupted.reason}; run again with --resume to finish it`;
  } else if (settled?.status && metrics.length < jobs.length && fixturesUnchanged) {
    // The status the remaining trials could no longer change; the statistics stay those of
    // the trials that ran.
    verdict.status = settled.status;
    verdict.reason = stoppedEarlyReason(metrics.length, jobs.length, settled.reason);
    verdict.stoppedEarly = true;
  } else if (budgetStop !== null && metrics.length < jobs.length) {
    // The trials that were running when the limit was reached finished and count.
    const stopped: BudgetStop = { ...budgetStop, trialsRun: metrics.length };
    verdict.budgetStop = stopped;
    verdict.reason = `the budget stopped the run: ${describeBudgetStop(stopped)}; the trials that ran: ${verdict.reason}`;
  }
  return verdict;
}

interface RetrySettings {
  /** Attempts allowed beyond the first for a retryable infrastructure error. */
  limit: number;
  /** First back-off for rate limits and network errors (doubles per attempt). */
  backoffMs: number;
  signal?: AbortSignal;
}

/**
 * Runs a trial, and again (up to the limit) while it ends in a retryable infrastructure error.
 * Each earlier attempt's files move to `attempts/<n>/` and are listed in the final metrics.
 */
async function runTrialWithRetries(
  artifactDir: string,
  job: TrialJob,
  retries: RetrySettings,
  earlier: readonly TrialAttempt[],
  recorder: AttemptRecorder,
): Promise<TrialMetrics | null> {
  const attempts: TrialAttempt[] = [...earlier];
  for (;;) {
    const result = await recordAttempt(artifactDir, job, [...attempts], recorder);
    if (result === null) return null;
    if (attempts.length >= retries.limit || !isRetryableInfraError(result)) return result;
    attempts.push(await archiveAttempt(artifactDir, (attempts.at(-1)?.attempt ?? 0) + 1, result));
    const delay = retryDelayMs(result, attempts.length, retries.backoffMs);
    if (delay > 0 && !retries.signal?.aborted)
      await sleep(delay, undefined, { signal: retries.signal }).catch(() => {});
    // Stopped before the next attempt: the trial stays unfinished with the attempts it made
    // kept, and --resume makes the next one.
    if (retries.signal?.aborted) return { ...result, infraReason: "run_aborted" };
  }
}

/** How an attempt runs and is sealed. */
interface AttemptRecorder {
  attempt: TrialAttemptRunner;
  runKey: RunKey;
  secretValues: readonly string[];
  signal: AbortSignal;
}

/**
 * One attempt, recorded: its metrics sealed with the run's key over every file of its folder
 * and written last. An attempt that throws is still only this trial's infrastructure error,
 * recorded with its message, and the run goes on; one the run's signal cut short stays
 * unfinished (no metrics.json), and --resume runs it again.
 */
async function recordAttempt(
  artifactDir: string,
  job: TrialJob,
  retriedAttempts: TrialAttempt[],
  recorder: AttemptRecorder,
): Promise<TrialMetrics | null> {
  let metrics: TrialMetrics | null;
  try {
    metrics = await recorder.attempt(job, artifactDir, retriedAttempts);
    if (metrics === null) return null;
  } catch (error) {
    const message = `harness error: ${error instanceof Error ? error.message : String(error)}`;
    metrics = harnessErrorMetrics(job, redactText(message, recorder.secretValues), retriedAttempts);
    // The file system filled under the harness (a record it could not write): no trial's doing.
    if (isDiskFull(error)) metrics = { ...metrics, infraReason: "disk_full" };
    if (!recorder.signal.aborted) await writePlaceholders(artifactDir, metrics.explanation);
  }
  if (recorder.signal.aborted && metrics.outcome === "infrastructure_error")
    return { ...metrics, infraReason: "run_aborted" };
  return sealTrial(artifactDir, metrics, recorder.runKey);
}

/** metrics.json comes last, whole or not at all: it marks a finished trial for --resume, and its seal covers every file written before it. */
export async function sealTrial(
  artifactDir: string,
  metrics: TrialMetrics,
  runKey: RunKey,
): Promise<TrialMetrics> {
  const sealed: TrialMetrics = { ...metrics, seal: await sealRecord(artifactDir, metrics, runKey) };
  await writeFileAtomic(join(artifactDir, "metrics.json"), `${JSON.stringify(sealed, null, 2)}\n`);
  return sealed;
}

/** The metrics of an attempt that ended in a harness error before it could say more. */
function harnessErrorMetrics(
  job: TrialJob,
  explanation: string,
  retriedAttempts: TrialAttempt[],
): TrialMetrics {
  return {
    schemaVersion: TRIAL_METRICS_VERSION,
    task: job.task,
    variant: job.variant,
    trial: job.trialIndex,
    seq: job.seq,
    outcome: "infrastructure_error",
    infraReason: "harness_error",
    explanation,
    receiptStatus: null,
    score: null,
    gradePassed: null,
    graders: [],
    changedFiles: [],
    patchBytes: null,
    patchRedacted: false,
    durationMs: 0,
    agentWallTimeMs: null,
    tokens: null,
    costUsd: null,
    credits: null,
    turns: null,
    costEquivalentTokens: null,
    toolCalls: null,
    toolUse: null,
    permissionDenials: 0,
    retriedAttempts,
  };
}

/** Every trial folder has the same files (docs/artifacts.md); the steps that never ran leave them empty. */
async function writePlaceholders(artifactDir: string, explanation: string): Promise<void> {
  await mkdir(artifactDir, { recursive: true });
  await writeFile(join(artifactDir, "stderr.txt"), `${explanation}\n`);
  const placeholders: Array<[string, string]> = [
    ["prompt.txt", ""],
    ["response.txt", ""],
    ["patch.diff", ""],
    ["trace.jsonl", ""],
    ["permission-decisions.json", `${JSON.stringify(permissionDecisionsDocument([]), null, 2)}\n`],
    [
      "validation.json",
      `${JSON.stringify({ schemaVersion: VALIDATION_VERSION, grades: [], error: null }, null, 2)}\n`,
    ],
    ["runtime-receipt.json", "null\n"],
    [
      "tool-use.json",
      `${JSON.stringify({ schemaVersion: TOOL_USE_VERSION, counts: { shell: 0, mcp: 0, other: 0 }, calls: [] }, null, 2)}\n`,
    ],
  ];
  await Promise.all(
    placeholders.map(([name, content]) =>
      writeFile(join(artifactDir, name), content, { flag: "wx" }).catch(
        (e: NodeJS.ErrnoException) => {
          if (e.code !== "EEXIST") throw e;
        },
      ),
    ),
  );
}

/** A new run's record key; a state directory that cannot hold it is the user's to fix. */
async function newRunKey(stateDir: string, manifestPath: string): Promise<RunKey> {
  try {
    return await createRunKey(stateDir);
  } catch (error) {
    throw new ExperimentInputError(manifestPath, [
      {
        path: "(state directory)",
        message: `cannot keep the run's record key in ${stateDir}: ${(error as Error).message}; set ${STATE_DIR_VARIABLE} to a directory you can write (outside --out)`,
      },
    ]);
  }
}

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
} from "../artifacts/index.js";
import {
  type Executor,
  type HostId,
  permissionDecisionsDocument,
  redactText,
  secretValuesFromEnv,
} from "../exec/index.js";
import { canonicalJson, sha256Hex } from "../ir/index.js";
import type { CommandSandbox } from "../sandbox/index.js";
import { runPool, writeFileAtomic } from "../shared/index.js";
import type { StoppingDecision } from "../stats/index.js";
import { snapshotTree, type TreeSnapshot } from "../workspace/index.js";
import { shareBaselines } from "./baselines.js";
import { type BudgetLimits, budgetReached, describeBudgetStop } from "./budget.js";
import { ExperimentInputError } from "./errors.js";
import type { Experiment, TrialJob } from "./experiment.js";
import { planTrials, trialArtifactDir } from "./plan.js";
import { prepareOrThrow } from "./preflight.js";
import {
  createRunKey,
  defaultStateDir,
  type RunKey,
  STATE_DIR_VARIABLE,
  sealRecord,
} from "./record-seal.js";
import { clearLeftovers, collectResumable, hashAgents, setAsideRejected } from "./resume.js";
import {
  archiveAttempt,
  isRetryableInfraError,
  prepareTrialFolder,
  retryDelayMs,
} from "./retry.js";
import { describeRunInputs, graderSettings } from "./run-inputs.js";
import { createRunLock, type RunLock } from "./run-lock.js";
import { runTrial } from "./trial.js";
import { stoppedEarlyReason } from "./trial-record.js";
import {
  buildVerdictDocument,
  stoppingDecision,
  stopsBySequentialDesign,
  writeVerdictFiles,
} from "./verdict.js";

const packageVersion = (createRequire(import.meta.url)("../../package.json") as { version: string })
  .version;

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
  /** The executor for the runtime host; the seam where tests put a fake SDK. */
  executorFor: (host: HostId) => Executor;
  onProgress?: (progress: RunProgress) => void;
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
  const now = options.now ?? (() => new Date());
  const startedAt = now().toISOString();
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
  const { graders, containment } = prepared;
  const assembled = { harnessHash: prepared.harnessHash, variants: prepared.variants };
  const before = await snapshotFixtures(experiment);
  const jobs = planTrials(experiment);
  const agentHashes = await hashAgents(experiment);
  const executor = options.executorFor(experiment.runtime.host as HostId);
  const evidence: VerdictDocument["evidence"] = {
    manifestHash: `sha256:${options.manifestHash.replace(/^sha256:/, "")}`,
    harnessHash: assembled.harnessHash,
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
        [...assembled.variants].map(([id, v]) => [id, v.revision.revisionId]),
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
  const frozen: FrozenTasks = {
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
        graders: (graders.get(task.id) ?? []).map((g) => ({
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
      [...graders].map(([task, list]) => [task, new Map(list.map((g) => [g.id, g.contractHash]))]),
    ),
    containment: containment.record.kind,
  });
  runManifest.evidence.containment = containment.record;
  const reusable = new Map<number, TrialMetrics>();
  const stateDir = options.stateDir ?? defaultStateDir(options.env ?? process.env);
  const resumed = options.resume
    ? await collectResumable(
        outDir,
        experiment,
        jobs,
        runManifest,
        reusable,
        options.retryInfra ?? 0,
        frozen,
        stateDir,
      )
    : undefined;
  const runKey = resumed?.runKey ?? (await newRunKey(stateDir, experiment.manifestPath));
  runManifest.evidence.runId = runKey.runId;

  await lock.acquire();
  const rejectedRecords = await setAsideRejected(outDir, resumed?.rejected ?? []);
  // What a run killed mid-way left: its trials' temporary workspaces and half-written files.
  if (options.resume)
    await clearLeftovers(outDir, experiment, jobs, options.tempParent ?? tmpdir());
  await writeFileAtomic(join(outDir, "manifest.json"), `${JSON.stringify(runManifest, null, 2)}\n`);
  await writeFileAtomic(join(outDir, "frozen-task.json"), `${JSON.stringify(frozen, null, 2)}\n`);
  // A resume that runs trials again makes the earlier verdict stale: until the new one is
  // written, the directory must not look like a finished run (to regrade, report or a reader).
  if (options.resume && reusable.size < jobs.length)
    await Promise.all(
      ["verdict.json", "verdict.md", "verdict.html"].map((name) =>
        rm(join(outDir, name), { force: true }),
      ),
    );

  const metrics: TrialMetrics[] = [...reusable.values()];
  const progress: RunProgress = {
    done: metrics.length,
    total: jobs.length,
    passed: metrics.filter((m) => m.outcome === "passed").length,
    failed: metrics.filter((m) => m.outcome === "failed").length,
    infraErrors: metrics.filter((m) => m.outcome === "infrastructure_error").length,
    elapsedMs: 0,
    etaMs: null,
    reused: metrics.length,
    retried: 0,
  };
  const retries: RetrySettings = {
    limit: options.retryInfra ?? 0,
    backoffMs: options.retryBackoffMs ?? DEFAULT_RETRY_BACKOFF_MS,
    ...(options.signal ? { signal: options.signal } : {}),
  };
  options.onProgress?.({ ...progress });
  const concurrency = options.concurrency ?? experiment.concurrency;
  const secretValues = secretValuesFromEnv(options.env ?? process.env);
  const pending = jobs.filter((job) => !reusable.has(job.seq));
  let ran = 0;

  // Sequential stopping: once no outcome of the remaining trials can change the status (opt-in
  // with --stop-early), or once the sequential design crosses a boundary, the trials not yet
  // started are skipped.
  let settled: StoppingDecision | undefined;
  const stops = options.stopEarly === true || stopsBySequentialDesign(experiment);
  const settle = () => {
    if (!stops || settled !== undefined) return;
    const decision = stoppingDecision(experiment, metrics);
    if (decision.canStop) settled = decision;
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

  const baselines = shareBaselines({
    enabled: !containment.record.unsafe,
    outDir,
    tempParent: options.tempParent ?? tmpdir(),
    user: "run",
  });
  const runJob = async (job: TrialJob) => {
    if (options.signal?.aborted || settled !== undefined) return;
    const task = experiment.tasks.find((t) => t.id === job.task)!;
    const variant = experiment.variants.find((v) => v.id === job.variant)!;
    const baseline = await baselines.forTask(task, before.get(task.id)!);
    const artifactDir = join(
      outDir,
      trialArtifactDir(experiment, variant.id, task.id, job.trialIndex),
    );
    // A resumed trial keeps the attempts it already made; anything else in its folder goes.
    const earlier = await prepareTrialFolder(artifactDir);
    const result = await runTrialWithRetries(artifactDir, job, retries, earlier, {
      experiment,
      fixtureSnapshot: before.get(task.id)!,
      task,
      variant,
      assembled: assembled.variants.get(variant.id)!,
      graders: graders.get(task.id) ?? [],
      executor,
      job,
      artifactDir,
      secretValues,
      sandbox: containment.sandbox,
      runKey,
      ...(baseline ? { baseline } : {}),
      env: options.env ?? process.env,
      ...(options.keepForgeRepos ? { keepForgeRepos: true } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.tempParent ? { tempParent: options.tempParent } : {}),
      ...(options.executorGraceMs === undefined
        ? {}
        : { executorGraceMs: options.executorGraceMs }),
    });
    // An interrupted trial wrote no record (runTrial and the retry loop see to it): it stays
    // unfinished, and --resume runs it again.
    if (options.signal?.aborted && result.infraReason === "run_aborted") return;
    if (result.retriedAttempts.length > 0) progress.retried += 1;
    metrics.push(result);
    settle();
    ran += 1;
    progress.done += 1;
    if (result.outcome === "passed") progress.passed += 1;
    else if (result.outcome === "failed") progress.failed += 1;
    else progress.infraErrors += 1;
    progress.elapsedMs = Math.round(performance.now() - started);
    const perTrial = progress.elapsedMs / ran;
    progress.etaMs = Math.round(
      (perTrial * (progress.total - progress.done)) /
        Math.max(1, Math.min(concurrency, progress.total - progress.done || 1)),
    );
    options.onProgress?.({ ...progress, last: result });
  };
  await runPool(pending, concurrency, async (job) => {
    if (overBudget()) return;
    running += 1;
    await runJob(job).finally(() => {
      running -= 1;
    });
  }).finally(() => baselines.dispose());

  const after = await snapshotFixtures(experiment).catch(() => new Map<string, TreeSnapshot>());
  // A fixture changed and restored mid-run is seen by the trial whose copy differed.
  const fixturesUnchanged =
    experiment.tasks.every((t) => after.get(t.id)?.hash === before.get(t.id)?.hash) &&
    !metrics.some((m) => m.infraReason === "fixture_changed");
  const verdict = buildVerdictDocument({
    experiment,
    assembled: assembled.variants,
    metrics,
    fixturesUnchanged,
    evidence,
    startedAt,
    finishedAt: now().toISOString(),
    retryLimit: retries.limit,
    containment: containment.record,
  });
  verdict.resumedTrials = reusable.size;
  verdict.rejectedRecords = rejectedRecords;
  if (options.signal?.aborted && metrics.length < jobs.length) {
    verdict.interrupted = true;
    verdict.status = "infrastructure_error";
    verdict.reason = `the run was interrupted after ${metrics.length} of ${jobs.length} trials; run again with --resume to finish it`;
  } else if (settled?.status && metrics.length < jobs.length && fixturesUnchanged) {
    // The status the remaining trials could no longer change; the statistics stay those of
    // the trials that ran.
    verdict.status = settled.status;
    verdict.reason = stoppedEarlyReason(metrics.length, jobs.length, settled.reason);
    verdict.stoppedEarly = true;
  } else if (budgetStop !== null && metrics.length < jobs.length) {
    // The trials that were running when the limit was reached finished and count.
    const stop: BudgetStop = { ...budgetStop, trialsRun: metrics.length };
    verdict.budgetStop = stop;
    verdict.reason = `the budget stopped the run: ${describeBudgetStop(stop)}; the trials that ran: ${verdict.reason}`;
  }
  await writeVerdictFiles(outDir, verdict);
  return { verdict, outDir };
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
  context: Parameters<typeof runTrial>[0],
): Promise<TrialMetrics> {
  const attempts: TrialAttempt[] = [...earlier];
  for (;;) {
    const result = await runTrialOrRecord(artifactDir, job, {
      ...context,
      retriedAttempts: [...attempts],
    });
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

/**
 * `runTrial` turns every failure it expects into a value; anything else it throws is still
 * only this trial's infrastructure error, recorded with its message, and the run goes on.
 */
async function runTrialOrRecord(
  artifactDir: string,
  job: TrialJob,
  context: Parameters<typeof runTrial>[0],
): Promise<TrialMetrics> {
  try {
    return await runTrial(context);
  } catch (error) {
    const message = `harness error: ${error instanceof Error ? error.message : String(error)}`;
    const metrics: TrialMetrics = {
      schemaVersion: TRIAL_METRICS_VERSION,
      task: job.task,
      variant: job.variant,
      trial: job.trialIndex,
      seq: job.seq,
      outcome: "infrastructure_error",
      infraReason: "harness_error",
      explanation: redactText(message, context.secretValues),
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
      retriedAttempts: context.retriedAttempts ?? [],
    };
    // An interrupted run leaves the trial unfinished (no metrics.json): --resume runs it again.
    if (context.signal?.aborted) return { ...metrics, infraReason: "run_aborted" };
    await mkdir(artifactDir, { recursive: true });
    await writeFile(join(artifactDir, "stderr.txt"), `${metrics.explanation}\n`);
    // Every trial folder has the same files (docs/artifacts.md); the steps that never ran leave them empty.
    const placeholders: Array<[string, string]> = [
      ["prompt.txt", ""],
      ["response.txt", ""],
      ["patch.diff", ""],
      ["trace.jsonl", ""],
      [
        "permission-decisions.json",
        `${JSON.stringify(permissionDecisionsDocument([]), null, 2)}\n`,
      ],
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
    const sealed = { ...metrics, seal: await sealRecord(artifactDir, metrics, context.runKey) };
    await writeFileAtomic(
      join(artifactDir, "metrics.json"),
      `${JSON.stringify(sealed, null, 2)}\n`,
    );
    return sealed;
  }
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

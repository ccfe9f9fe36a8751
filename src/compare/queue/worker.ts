// `harness worker`: takes trial jobs from the queue and runs each with `runTrial`, the same
// function a local run uses, under the same sandbox and policy. It reads the experiment from
// the run's bundle (checked against its hash), holds no run key (the coordinator seals), and
// takes credentials from its own environment only.
import { mkdtemp, rm } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { type Job, WaitingError, Worker } from "bullmq";
import type { TrialMetrics } from "../../artifacts/index.js";
import {
  createExecutor,
  type Executor,
  type HostId,
  secretValuesFromEnv,
} from "../../exec/index.js";
import { snapshotTree, type TreeSnapshot } from "../../workspace/index.js";
import type { Experiment, TrialJob } from "../experiment.js";
import { loadHarnessCatalog, loadManifest } from "../manifest/index.js";
import { type SharedBaselines, shareBaselines } from "../run/baselines.js";
import { calibrationExperiment } from "../run/calibrate.js";
import { type Prepared, prepareOrThrow } from "../run/preflight.js";
import { runTrial } from "../trial/trial.js";
import { packTrialFolder } from "./accept.js";
import { openBundle, unpackBundle } from "./bundle.js";
import { connect, type QueueAddress, reach } from "./connection.js";
import {
  bundleKey,
  HARNESSLAB_VERSION,
  KEY_PREFIX,
  MAX_RESULT_BYTES,
  QUEUE_PROTOCOL,
  TRIALS_QUEUE,
  type TrialJobData,
  type TrialResult,
  trialJobSchema,
} from "./protocol.js";

export interface WorkerOptions {
  address: QueueAddress;
  /** Trials run at once (default 1). */
  concurrency?: number;
  /** How the worker names itself in results and logs (default: host name and process id). */
  name?: string;
  /** Stops the worker: running trials are cut short and their jobs handed back. */
  signal: AbortSignal;
  /** Where bundles and trials are unpacked and run (default: the OS temp directory). */
  tempParent?: string;
  /**
   * Also run the trials of runs started with `--unsafe-no-sandbox` (outside the OS sandbox); a
   * worker without it hands such a trial back and stops. Sandboxed runs stay sandboxed.
   */
  unsafeNoSandbox?: boolean;
  /**
   * How long a job stays with a worker that stopped answering before another worker takes it
   * (BullMQ's lock duration and stalled-job check; default 30 s).
   */
  lockMs?: number;
  /** The worker's environment: credentials for its hosts, never sent through the queue. */
  env?: NodeJS.ProcessEnv;
  /** The executor for a host (the seam tests use; default: `createExecutor`). */
  executorFor?: (host: HostId) => Executor;
  log?: (line: string) => void;
}

/**
 * What this worker's machine lacks to run a run's trials (a host's SDK or credentials, the
 * sandbox, a grader's program, the run's `--unsafe-no-sandbox`): not the trial's fault, so the
 * job goes back to the queue for a worker that can, and this one stops and says why.
 */
class WorkerUnfitError extends Error {}

/** A bundle unpacked here: its folder and its manifest. */
interface Unpacked {
  dir: string;
  manifestPath: string;
}

/** A run's experiment as this worker loaded and prepared it from the bundle. */
interface LoadedRun {
  /** Where the bundle is unpacked here. */
  root: string;
  experiment: Experiment;
  prepared: Prepared;
  executor: Executor;
  fixtures: Map<string, TreeSnapshot>;
  /** Each task's baseline, shared by this worker's trials of the run as a local run shares it. */
  baselines: SharedBaselines;
}

/**
 * Runs until `signal` aborts or Redis is lost (then it rejects with what happened). Returns when
 * the running trials have been handed back and the connections are closed.
 */
export async function runWorker(options: WorkerOptions): Promise<void> {
  const name = options.name ?? `${hostname()}-${process.pid}`;
  const log = options.log ?? (() => {});
  const env = options.env ?? process.env;
  const tempParent = options.tempParent ?? tmpdir();
  const home = await mkdtemp(join(tempParent, "harnesslab-worker-"));
  let lostReason: string | undefined;
  const lost = new AbortController();
  const onLost = (message: string) => {
    lostReason ??= message;
    lost.abort(new Error(message));
  };
  let unfitReason: string | undefined;
  const unfit = new AbortController();
  const connection = connect(options.address, `harnesslab-worker:${name}`, onLost);
  const runs = new Map<string, Promise<LoadedRun>>();
  const bundles = new Map<string, Promise<Unpacked>>();
  const stopping = AbortSignal.any([options.signal, lost.signal, unfit.signal]);
  let worker: Worker | undefined;
  try {
    await reach(connection, options.address);
    const lockMs = options.lockMs ?? 30_000;
    worker = new Worker<TrialJobData, TrialResult>(
      TRIALS_QUEUE,
      async (job, token, jobSignal) => {
        const signal = AbortSignal.any([stopping, ...(jobSignal ? [jobSignal] : [])]);
        const result = await processJob(job, signal);
        // Stopped, not finished: the job goes back for another worker to run from the start.
        if (result === null) {
          await job.moveToWait(token);
          throw new WaitingError();
        }
        return result;
      },
      {
        connection,
        prefix: KEY_PREFIX,
        name,
        concurrency: options.concurrency ?? 1,
        lockDuration: lockMs,
        stalledInterval: lockMs,
        // A job whose worker vanished (SIGKILL, a lost machine) runs again on another, once;
        // one that keeps taking its workers down fails and is the trial's infrastructure error.
        maxStalledCount: 1,
        autorun: false,
      },
    );
    worker.on("error", (error) => log(`worker ${name}: ${error.message}`));
    const running = worker.run();
    await worker.waitUntilReady();
    if (!stopping.aborted)
      log(
        `worker ${name}: taking trials from ${options.address.shown} (concurrency ${options.concurrency ?? 1})`,
      );
    await new Promise<void>((resolve) => {
      if (stopping.aborted) resolve();
      stopping.addEventListener("abort", () => resolve(), { once: true });
    });
    worker.cancelAllJobs("the worker is stopping");
    await worker.close().catch(() => {});
    await running.catch(() => {});
  } finally {
    await worker?.close(true).catch(() => {});
    connection.disconnect();
    for (const pending of runs.values())
      await pending.then((run) => run.baselines.dispose()).catch(() => {});
    await rm(home, { recursive: true, force: true }).catch(() => {});
  }
  if (unfitReason !== undefined) throw new Error(unfitReason);
  if (lostReason !== undefined && !options.signal.aborted) throw new Error(lostReason);

  async function processJob(
    job: Job<TrialJobData, TrialResult>,
    signal: AbortSignal,
  ): Promise<TrialResult | null> {
    const refuse = (
      code: Extract<TrialResult, { kind: "refused" }>["code"],
      message: string,
    ): TrialResult => {
      log(`worker ${name}: refused job ${job.id}: ${message}`);
      return { kind: "refused", worker: name, code, message };
    };
    const handBack = (problem: string): null => {
      const message = `worker ${name} cannot run the trials of run ${job.data.runId}: ${problem}`;
      log(`${message}; it hands trial ${job.data.trial.seq} back to the queue and stops`);
      unfitReason ??= `${message}; fix this machine and start the worker again`;
      unfit.abort(new Error(message));
      return null;
    };
    // Taken in the moment the worker began to stop: back to the queue, untouched.
    if (stopping.aborted) return null;
    const version = versionOf(job.data);
    if (version.protocol !== QUEUE_PROTOCOL || version.harnesslab !== HARNESSLAB_VERSION)
      return refuse(
        "version",
        `worker ${name} runs harnesslab ${HARNESSLAB_VERSION} (queue protocol ${QUEUE_PROTOCOL}); the run's coordinator sent harnesslab ${version.harnesslab} (queue protocol ${version.protocol}): run the same harnesslab version on the coordinator and every worker`,
      );
    const parsed = trialJobSchema.safeParse(job.data);
    if (!parsed.success)
      return refuse(
        "version",
        `worker ${name} cannot read job ${job.id}: it is not a queue protocol ${QUEUE_PROTOCOL} trial job`,
      );
    const data = parsed.data;
    if (data.unsafeNoSandbox && !options.unsafeNoSandbox)
      return handBack(
        "the run was started with --unsafe-no-sandbox, and this worker runs trials only in the sandbox (start a worker with --unsafe-no-sandbox to take such runs)",
      );

    let run: LoadedRun;
    try {
      const unpacked = await bundleOf(data.bundle);
      if ("code" in unpacked) return refuse(unpacked.code, unpacked.message);
      run = await loadRun(data, unpacked);
    } catch (error) {
      if (error instanceof WorkerUnfitError) return handBack(error.message);
      return refuse(
        "inputs-differ",
        `worker ${name} cannot prepare the run: ${(error as Error).message}`,
      );
    }
    if (run.prepared.harnessHash !== data.harnessHash)
      return refuse(
        "inputs-differ",
        `the bundle's .harness files assemble to ${run.prepared.harnessHash} here, not ${data.harnessHash} as on the coordinator`,
      );
    const fixture = run.fixtures.get(data.trial.task);
    if (fixture?.hash !== data.fixtureHash)
      return refuse(
        "inputs-differ",
        `the bundle's fixture of task ${data.trial.task} hashes to ${fixture?.hash ?? "nothing"} here, not ${data.fixtureHash} as on the coordinator`,
      );

    const trial: TrialJob = data.trial;
    const task = run.experiment.tasks.find((t) => t.id === trial.task);
    const variant = run.experiment.variants.find((v) => v.id === trial.variant);
    if (task === undefined || variant === undefined)
      return refuse(
        "inputs-differ",
        `the bundle's experiment has no ${trial.variant}/${trial.task}`,
      );
    const baseline = await run.baselines.forTask(task, fixture);
    const artifactDir = await mkdtemp(join(home, "trial-"));
    try {
      log(
        `worker ${name}: trial ${trial.seq} (${trial.variant}/${trial.task} #${trial.trialIndex}, attempt ${data.attempt}) started`,
      );
      const metrics = await runTrial({
        experiment: run.experiment,
        fixtureSnapshot: fixture,
        task,
        variant,
        assembled: run.prepared.variants.get(variant.id)!,
        graders: run.prepared.graders.get(task.id) ?? [],
        executor: run.executor,
        job: trial,
        artifactDir,
        secretValues: secretValuesFromEnv(env),
        sandbox: run.prepared.containment.sandbox,
        env,
        signal,
        tempParent,
        ...(data.keepForgeRepos ? { keepForgeRepos: true } : {}),
        ...(baseline ? { baseline } : {}),
        experimentRoot: { here: run.root, recorded: data.bundleRoot },
        ...(data.executorGraceMs === undefined ? {} : { executorGraceMs: data.executorGraceMs }),
      });
      if (signal.aborted && metrics.infraReason === "run_aborted") {
        log(`worker ${name}: trial ${trial.seq} stopped; handed back`);
        return null;
      }
      const files = await packTrialFolder(artifactDir);
      log(`worker ${name}: trial ${trial.seq} done: ${metrics.outcome}`);
      return resultOf(metrics, files);
    } finally {
      await rm(artifactDir, { recursive: true, force: true }).catch(() => {});
    }
  }

  function resultOf(metrics: TrialMetrics, files: Buffer): TrialResult {
    const { seal: _seal, ...unsealed } = metrics;
    if (files.length > MAX_RESULT_BYTES)
      throw new Error(
        `the trial's folder takes ${files.length} bytes compressed, more than the queue carries (${MAX_RESULT_BYTES})`,
      );
    return { kind: "trial", worker: name, metrics: unsealed, files: files.toString("base64") };
  }

  /** The bundle unpacked here (once per bundle), or why it cannot be. */
  async function bundleOf(
    hash: string,
  ): Promise<Unpacked | { code: "bundle-missing" | "bundle-invalid"; message: string }> {
    let pending = bundles.get(hash);
    if (pending === undefined) {
      pending = (async () => {
        const bytes = await connection.getBuffer(bundleKey(hash));
        if (bytes === null)
          throw Object.assign(
            new Error(
              `the run's bundle ${hash} is not in Redis at ${options.address.shown} (it expired or was removed); once the run stops, \`compare run --resume --retry-infra 1\` publishes it again and re-runs the trials it failed`,
            ),
            { code: "bundle-missing" },
          );
        const opened = openBundle(hash, bytes);
        if (!opened.ok) throw Object.assign(new Error(opened.message), { code: "bundle-invalid" });
        const dir = join(home, `bundle-${hash.slice(7, 23)}`);
        return { dir, manifestPath: await unpackBundle(opened.document, dir) };
      })();
      bundles.set(hash, pending);
      // A missing bundle may be published later (a resumed coordinator): ask again next time.
      pending.catch(() => bundles.delete(hash));
    }
    try {
      return await pending;
    } catch (error) {
      const code =
        (error as { code?: string }).code === "bundle-missing"
          ? "bundle-missing"
          : "bundle-invalid";
      return { code, message: (error as Error).message };
    }
  }

  /** The run's experiment loaded from its bundle and prepared, once per run and settings. */
  function loadRun(data: TrialJobData, unpacked: Unpacked): Promise<LoadedRun> {
    const key = JSON.stringify([data.bundle, data.trials, data.calibrate, data.unsafeNoSandbox]);
    let pending = runs.get(key);
    if (pending === undefined) {
      pending = (async () => {
        const loaded = await loadManifest(unpacked.manifestPath, {
          trialsOverride: data.trials,
          loadCatalog: loadHarnessCatalog,
        });
        if (!loaded.ok)
          throw new Error(loaded.problems.map((p) => `${p.path}: ${p.message}`).join("; "));
        const experiment = data.calibrate
          ? calibrationExperiment(loaded.experiment)
          : loaded.experiment;
        // The coordinator checked the experiment itself; what fails here is this machine.
        const prepared = await prepareOrThrow(experiment, {
          ...(data.unsafeNoSandbox ? { unsafeNoSandbox: true } : {}),
          checkHost: true,
          env,
        }).catch((error: Error) => {
          throw new WorkerUnfitError(error.message);
        });
        const fixtures = new Map<string, TreeSnapshot>();
        for (const task of experiment.tasks)
          fixtures.set(task.id, await snapshotTree(task.fixtureDir));
        const executor = (options.executorFor ?? createExecutor)(experiment.runtime.host as HostId);
        // Notes of the baselines' area go in the worker's own folder, removed when it stops.
        const baselines = shareBaselines({
          enabled: !prepared.containment.record.unsafe,
          outDir: home,
          tempParent,
          user: "run",
        });
        return { root: unpacked.dir, experiment, prepared, executor, fixtures, baselines };
      })();
      runs.set(key, pending);
      pending.catch(() => runs.delete(key));
    }
    return pending;
  }
}

/** The version fields of a job, read before anything else of it is trusted. */
function versionOf(data: unknown): { protocol: unknown; harnesslab: unknown } {
  const fields = (data ?? {}) as { protocol?: unknown; harnesslab?: unknown };
  return { protocol: fields.protocol ?? "none", harnesslab: fields.harnesslab ?? "unknown" };
}

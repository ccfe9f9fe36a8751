// `harness worker`: takes trial jobs from the queue and runs each with `runTrial`, the same
// function a local run uses, under the same sandbox and policy. It reads the experiment from
// the run's bundle (checked against its hash), holds no run key (the coordinator seals), and
// takes credentials from its own environment only.
import { mkdtemp, rm } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { type Job, WaitingError, Worker } from "bullmq";
import type { Redis } from "ioredis";
import type { TrialMetrics } from "../../artifacts/index.js";
import {
  createExecutor,
  type Executor,
  executorsByHost,
  type HostId,
  secretValuesFromEnv,
} from "../../exec/index.js";
import { snapshotTree, type TreeSnapshot } from "../../workspace/index.js";
import { type Experiment, runtimeOf, type TrialJob } from "../experiment.js";
import { loadHarnessCatalog, loadManifest } from "../manifest/index.js";
import { type SharedBaselines, shareBaselines } from "../run/baselines.js";
import { calibrationExperiment } from "../run/calibrate.js";
import { type Prepared, prepareOrThrow, unreadyHosts } from "../run/preflight.js";
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
  /** The executor of each host the run's variants use. */
  executorFor: (host: HostId) => Executor;
  /** Hosts of the run this machine cannot start, with why. */
  unreadyHosts: Map<HostId, string>;
  fixtures: Map<string, TreeSnapshot>;
  /** Each task's baseline, shared by this worker's trials of the run as a local run shares it. */
  baselines: SharedBaselines;
}

/**
 * Runs until `signal` aborts or Redis is lost (then it rejects with what happened). Returns when
 * the running trials have been handed back and the connections are closed.
 */
export async function runWorker(options: WorkerOptions): Promise<void> {
  const worker = new QueueWorker(
    options,
    await mkdtemp(join(options.tempParent ?? tmpdir(), "harnesslab-worker-")),
  );
  await worker.run();
}

type Refusal = Extract<TrialResult, { kind: "refused" }>["code"];

/** A job this worker can run: its data checked, its run loaded, its task and variant found. */
interface RunnableJob {
  data: TrialJobData;
  run: LoadedRun;
  task: Experiment["tasks"][number];
  variant: Experiment["variants"][number];
  fixture: TreeSnapshot;
}

/** One `harness worker`: its connection, the runs and bundles it loaded, why it stops. */
class QueueWorker {
  private readonly name: string;
  private readonly log: (line: string) => void;
  private readonly env: NodeJS.ProcessEnv;
  private readonly tempParent: string;
  private readonly connection: Redis;
  private readonly lost = new AbortController();
  private readonly unfit = new AbortController();
  private lostReason: string | undefined;
  private unfitReason: string | undefined;
  private readonly runs = new Map<string, Promise<LoadedRun>>();
  private readonly bundles = new Map<string, Promise<Unpacked>>();
  private readonly stopping: AbortSignal;

  constructor(
    private readonly options: WorkerOptions,
    /** The worker's own folder: bundles, trial folders, baselines' notes; removed when it stops. */
    private readonly home: string,
  ) {
    this.name = options.name ?? `${hostname()}-${process.pid}`;
    this.log = options.log ?? (() => {});
    this.env = options.env ?? process.env;
    this.tempParent = options.tempParent ?? tmpdir();
    this.connection = connect(options.address, `harnesslab-worker:${this.name}`, (message) => {
      this.lostReason ??= message;
      this.lost.abort(new Error(message));
    });
    this.stopping = AbortSignal.any([options.signal, this.lost.signal, this.unfit.signal]);
  }

  /** Takes jobs until it is stopped, Redis is lost, or this machine cannot run a run's trials. */
  async run(): Promise<void> {
    let worker: Worker | undefined;
    try {
      await reach(this.connection, this.options.address);
      worker = this.startTaking();
      const running = worker.run();
      await worker.waitUntilReady();
      if (!this.stopping.aborted)
        this.log(
          `worker ${this.name}: taking trials from ${this.options.address.shown} (concurrency ${this.options.concurrency ?? 1})`,
        );
      await new Promise<void>((resolve) => {
        if (this.stopping.aborted) resolve();
        this.stopping.addEventListener("abort", () => resolve(), { once: true });
      });
      worker.cancelAllJobs("the worker is stopping");
      await worker.close().catch(() => {});
      await running.catch(() => {});
    } finally {
      await worker?.close(true).catch(() => {});
      this.connection.disconnect();
      for (const pending of this.runs.values())
        await pending.then((run) => run.baselines.dispose()).catch(() => {});
      await rm(this.home, { recursive: true, force: true }).catch(() => {});
    }
    if (this.unfitReason !== undefined) throw new Error(this.unfitReason);
    if (this.lostReason !== undefined && !this.options.signal.aborted)
      throw new Error(this.lostReason);
  }

  /** The BullMQ worker; a job stopped before it finished goes back to the queue. */
  private startTaking(): Worker {
    const lockMs = this.options.lockMs ?? 30_000;
    const worker = new Worker<TrialJobData, TrialResult>(
      TRIALS_QUEUE,
      async (job, token, jobSignal) => {
        const signal = AbortSignal.any([this.stopping, ...(jobSignal ? [jobSignal] : [])]);
        const result = await this.processJob(job, signal);
        // Stopped, not finished: the job goes back for another worker to run from the start.
        if (result === null) {
          await job.moveToWait(token);
          throw new WaitingError();
        }
        return result;
      },
      {
        connection: this.connection,
        prefix: KEY_PREFIX,
        name: this.name,
        concurrency: this.options.concurrency ?? 1,
        lockDuration: lockMs,
        stalledInterval: lockMs,
        // A job whose worker vanished (SIGKILL, a lost machine) runs again on another, once;
        // one that keeps taking its workers down fails and is the trial's infrastructure error.
        maxStalledCount: 1,
        autorun: false,
      },
    );
    worker.on("error", (error) => this.log(`worker ${this.name}: ${error.message}`));
    return worker;
  }

  /** A job's result; null when the job goes back to the queue (stopped, or this machine unfit). */
  private async processJob(
    job: Job<TrialJobData, TrialResult>,
    signal: AbortSignal,
  ): Promise<TrialResult | null> {
    // Taken in the moment the worker began to stop: back to the queue, untouched.
    if (this.stopping.aborted) return null;
    const checked = this.checkJob(job);
    if (checked.kind !== "data") return checked.result;
    const runnable = await this.prepare(job, checked.data);
    if (runnable.kind !== "runnable") return runnable.result;
    return this.runJob(runnable.job, signal);
  }

  private refuse(job: Job, code: Refusal, message: string): TrialResult {
    this.log(`worker ${this.name}: refused job ${job.id}: ${message}`);
    return { kind: "refused", worker: this.name, code, message };
  }

  /**
   * What this worker's machine lacks to run a run's trials is not the trial's fault: the job
   * goes back to the queue for a worker that can, and this one stops and says why.
   */
  private handBack(data: TrialJobData, problem: string): null {
    const message = `worker ${this.name} cannot run the trials of run ${data.runId}: ${problem}`;
    this.log(`${message}; it hands trial ${data.trial.seq} back to the queue and stops`);
    this.unfitReason ??= `${message}; fix this machine and start the worker again`;
    this.unfit.abort(new Error(message));
    return null;
  }

  /** The job's data, once its version and shape are this worker's. */
  private checkJob(
    job: Job<TrialJobData, TrialResult>,
  ): { kind: "data"; data: TrialJobData } | { kind: "answered"; result: TrialResult | null } {
    const version = versionOf(job.data);
    if (version.protocol !== QUEUE_PROTOCOL || version.harnesslab !== HARNESSLAB_VERSION)
      return {
        kind: "answered",
        result: this.refuse(
          job,
          "version",
          `worker ${this.name} runs harnesslab ${HARNESSLAB_VERSION} (queue protocol ${QUEUE_PROTOCOL}); the run's coordinator sent harnesslab ${version.harnesslab} (queue protocol ${version.protocol}): run the same harnesslab version on the coordinator and every worker`,
        ),
      };
    const parsed = trialJobSchema.safeParse(job.data);
    if (!parsed.success)
      return {
        kind: "answered",
        result: this.refuse(
          job,
          "version",
          `worker ${this.name} cannot read job ${job.id}: it is not a queue protocol ${QUEUE_PROTOCOL} trial job`,
        ),
      };
    if (parsed.data.unsafeNoSandbox && !this.options.unsafeNoSandbox)
      return {
        kind: "answered",
        result: this.handBack(
          parsed.data,
          "the run was started with --unsafe-no-sandbox, and this worker runs trials only in the sandbox (start a worker with --unsafe-no-sandbox to take such runs)",
        ),
      };
    return { kind: "data", data: parsed.data };
  }

  /** The run loaded from its bundle, and the job's task, variant and fixture as the coordinator's. */
  private async prepare(
    job: Job,
    data: TrialJobData,
  ): Promise<
    { kind: "runnable"; job: RunnableJob } | { kind: "answered"; result: TrialResult | null }
  > {
    const answered = (result: TrialResult | null) => ({ kind: "answered" as const, result });
    let run: LoadedRun;
    try {
      const unpacked = await this.bundleOf(data.bundle);
      if ("code" in unpacked) return answered(this.refuse(job, unpacked.code, unpacked.message));
      run = await this.loadRun(data, unpacked);
    } catch (error) {
      if (error instanceof WorkerUnfitError) return answered(this.handBack(data, error.message));
      return answered(
        this.refuse(
          job,
          "inputs-differ",
          `worker ${this.name} cannot prepare the run: ${(error as Error).message}`,
        ),
      );
    }
    if (run.prepared.harnessHash !== data.harnessHash)
      return answered(
        this.refuse(
          job,
          "inputs-differ",
          `the bundle's .harness files assemble to ${run.prepared.harnessHash} here, not ${data.harnessHash} as on the coordinator`,
        ),
      );
    const fixture = run.fixtures.get(data.trial.task);
    if (fixture === undefined || fixture.hash !== data.fixtureHash)
      return answered(
        this.refuse(
          job,
          "inputs-differ",
          `the bundle's fixture of task ${data.trial.task} hashes to ${fixture?.hash ?? "nothing"} here, not ${data.fixtureHash} as on the coordinator`,
        ),
      );
    const task = run.experiment.tasks.find((t) => t.id === data.trial.task);
    const variant = run.experiment.variants.find((v) => v.id === data.trial.variant);
    if (task === undefined || variant === undefined)
      return answered(
        this.refuse(
          job,
          "inputs-differ",
          `the bundle's experiment has no ${data.trial.variant}/${data.trial.task}`,
        ),
      );
    const unready = run.unreadyHosts.get(runtimeOf(run.experiment, variant).host);
    if (unready !== undefined) return answered(this.handBack(data, unready));
    return { kind: "runnable", job: { data, run, task, variant, fixture } };
  }

  /** Runs the trial as a local run does; null when it was stopped (handed back). */
  private async runJob(
    { data, run, task, variant, fixture }: RunnableJob,
    signal: AbortSignal,
  ): Promise<TrialResult | null> {
    const trial: TrialJob = data.trial;
    const baseline = await run.baselines.forTask(task, fixture);
    const artifactDir = await mkdtemp(join(this.home, "trial-"));
    try {
      this.log(
        `worker ${this.name}: trial ${trial.seq} (${trial.variant}/${trial.task} #${trial.trialIndex}, attempt ${data.attempt}) started`,
      );
      const metrics = await runTrial({
        onNotice: (line) => this.log(`worker ${this.name}: ${line}`),
        experiment: run.experiment,
        fixtureSnapshot: fixture,
        task,
        variant,
        assembled: run.prepared.variants.get(variant.id)!,
        graders: run.prepared.graders.get(task.id) ?? [],
        executor: run.executorFor(runtimeOf(run.experiment, variant).host),
        job: trial,
        artifactDir,
        secretValues: secretValuesFromEnv(this.env),
        sandbox: run.prepared.containment.sandbox,
        env: this.env,
        signal,
        tempParent: this.tempParent,
        ...(data.keepForgeRepos ? { keepForgeRepos: true } : {}),
        ...(baseline ? { baseline } : {}),
        experimentRoot: { here: run.root, recorded: data.bundleRoot },
        ...(data.executorGraceMs === undefined ? {} : { executorGraceMs: data.executorGraceMs }),
      });
      if (signal.aborted && metrics.infraReason === "run_aborted") {
        this.log(`worker ${this.name}: trial ${trial.seq} stopped; handed back`);
        return null;
      }
      const files = await packTrialFolder(artifactDir);
      this.log(`worker ${this.name}: trial ${trial.seq} done: ${metrics.outcome}`);
      return this.resultOf(metrics, files);
    } finally {
      await rm(artifactDir, { recursive: true, force: true }).catch(() => {});
    }
  }

  private resultOf(metrics: TrialMetrics, files: Buffer): TrialResult {
    const { seal: _seal, ...unsealed } = metrics;
    if (files.length > MAX_RESULT_BYTES)
      throw new Error(
        `the trial's folder takes ${files.length} bytes compressed, more than the queue carries (${MAX_RESULT_BYTES})`,
      );
    return { kind: "trial", worker: this.name, metrics: unsealed, files: files.toString("base64") };
  }

  /** The bundle unpacked here (once per bundle), or why it cannot be. */
  private async bundleOf(
    hash: string,
  ): Promise<Unpacked | { code: "bundle-missing" | "bundle-invalid"; message: string }> {
    let pending = this.bundles.get(hash);
    if (pending === undefined) {
      pending = this.unpack(hash);
      this.bundles.set(hash, pending);
      // A missing bundle may be published later (the coordinator does): ask again next time.
      pending.catch(() => this.bundles.delete(hash));
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

  private async unpack(hash: string): Promise<Unpacked> {
    const bytes = await this.connection.getBuffer(bundleKey(hash));
    if (bytes === null)
      throw Object.assign(
        new Error(
          `the run's bundle ${hash} is not in Redis at ${this.options.address.shown} (it expired or was removed); its coordinator publishes it again, and \`compare run --resume\` does once the run stopped`,
        ),
        { code: "bundle-missing" },
      );
    const opened = openBundle(hash, bytes);
    if (!opened.ok) throw Object.assign(new Error(opened.message), { code: "bundle-invalid" });
    const dir = join(this.home, `bundle-${hash.slice(7, 23)}`);
    return { dir, manifestPath: await unpackBundle(opened.document, dir) };
  }

  /** The run's experiment loaded from its bundle and prepared, once per run and settings. */
  private loadRun(data: TrialJobData, unpacked: Unpacked): Promise<LoadedRun> {
    const key = JSON.stringify([data.bundle, data.trials, data.calibrate, data.unsafeNoSandbox]);
    let pending = this.runs.get(key);
    if (pending === undefined) {
      pending = this.load(data, unpacked);
      this.runs.set(key, pending);
      pending.catch(() => this.runs.delete(key));
    }
    return pending;
  }

  private async load(data: TrialJobData, unpacked: Unpacked): Promise<LoadedRun> {
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
      hostsCheckedByCaller: true,
      env: this.env,
    }).catch((error: Error) => {
      throw new WorkerUnfitError(error.message);
    });
    const unready = new Map(
      (await unreadyHosts(experiment, this.env)).map(({ host, problems }) => [
        host,
        `the ${host} host cannot start here: ${problems.map((p) => `${p.path}: ${p.message}`).join("; ")}`,
      ]),
    );
    const fixtures = new Map<string, TreeSnapshot>();
    for (const task of experiment.tasks) fixtures.set(task.id, await snapshotTree(task.fixtureDir));
    const executors = executorsByHost(this.options.executorFor ?? createExecutor);
    // Notes of the baselines' area go in the worker's own folder, removed when it stops.
    const baselines = shareBaselines({
      enabled: !prepared.containment.record.unsafe,
      outDir: this.home,
      tempParent: this.tempParent,
      user: "run",
    });
    return {
      root: unpacked.dir,
      experiment,
      prepared,
      executorFor: executors,
      unreadyHosts: unready,
      fixtures,
      baselines,
    };
  }
}

/** The version fields of a job, read before anything else of it is trusted. */
function versionOf(data: unknown): { protocol: unknown; harnesslab: unknown } {
  const fields = (data ?? {}) as { protocol?: unknown; harnesslab?: unknown };
  return { protocol: fields.protocol ?? "none", harnesslab: fields.harnesslab ?? "unknown" };
}

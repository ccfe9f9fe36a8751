// `compare run --queue`: the run's trials go to workers through Redis instead of this process's
// pool. Everything else is the local run's: the plan, the lock, --resume, --retry-infra,
// --stop-early, the progress line, the records (sealed here with the run's key, which never
// leaves this machine) and the verdict. One BullMQ job per trial attempt, its id the run's id,
// the trial's number and the attempt, so a job is never added twice and a result is accepted once.
import { setTimeout as sleep } from "node:timers/promises";
import { type Job, Queue, QueueEvents } from "bullmq";
import type { Redis } from "ioredis";
import type { TrialAttempt, TrialMetrics } from "../../artifacts/index.js";
import type { TrialJob } from "../experiment.js";
import type { TrialPlaceFactory } from "../run/runner.js";
import { AcceptedResults, checkTrialResult, writeTrialFolder } from "./accept.js";
import { type Bundle, packBundle } from "./bundle.js";
import { connect, type QueueAddress, reach } from "./connection.js";
import {
  bundleKey,
  HARNESSLAB_VERSION,
  KEY_PREFIX,
  QUEUE_PROTOCOL,
  TRIALS_QUEUE,
  type TrialJobData,
  type TrialResult,
  trialResultSchema,
} from "./protocol.js";

/** How long a published bundle stays in Redis after the run last added a job (a week). */
const BUNDLE_TTL_S = 7 * 24 * 3600;

/**
 * How often the coordinator looks at its jobs in Redis itself. Events are the fast path; this
 * catches what they cannot tell: a completion event trimmed from the stream before it was read,
 * a job gone from Redis, a bundle evicted, no worker at all.
 */
const WATCH_MS = 2_000;

/** How many looks in a row may find trials waiting and no worker before the run says so. */
const NO_WORKER_LOOKS = 5;

/**
 * How many times one trial attempt is queued again after its worker found the run's bundle gone
 * from Redis. The coordinator publishes the bundle again each time; a Redis that keeps evicting
 * it (a `maxmemory` too small for it) makes the attempt an infrastructure error instead of a loop.
 */
const BUNDLE_REPUBLISHES = 3;

/** How a wait for a job ended. */
type Waited =
  | { kind: "completed"; value: unknown }
  | { kind: "failed"; message: string }
  /** Not in Redis any more (Redis lost its data, or someone removed it). */
  | { kind: "gone" }
  /** Taken back before a worker started it (stopped early, over budget, interrupted). */
  | { kind: "withdrawn" }
  /** The run stopped while the job was with a worker: its result waits in Redis for --resume. */
  | { kind: "stopped" };

/** What one queued job gave: a result to check, or no record for the trial. */
type Taken = { kind: "result"; result: TrialResult } | { kind: "none" };

export interface QueueTrialsOptions {
  address: QueueAddress;
  log?: (line: string) => void;
  /** How often the jobs are looked at in Redis besides their events (default 2 s). */
  watchMs?: number;
}

type PlaceSetup = Parameters<TrialPlaceFactory>[0];

/** The queue as the place a run's trials run in. */
export function queueTrials(queueOptions: QueueTrialsOptions): TrialPlaceFactory {
  return async (setup) => {
    const run = new QueuedRun(queueOptions, setup);
    await run.open();
    return {
      // Every pending trial waits in the queue for a worker; a budget is checked before each
      // job is added, so with one the manifest's concurrency bounds the jobs in the queue.
      ...(setup.options.budget === undefined
        ? { concurrency: Math.max(1, setup.inputs.jobs.length) }
        : {}),
      attempt: (job, artifactDir, retriedAttempts) =>
        run.attempt(job, artifactDir, retriedAttempts),
      stopStarting: () => run.stopStarting(),
      close: () => run.close(),
    };
  };
}

/** One run's side of the queue: its connections, its bundle, the jobs it waits for. */
class QueuedRun {
  private readonly address: QueueAddress;
  private readonly log: (line: string) => void;
  private readonly lostMessages: string[] = [];
  private readonly connection: Redis;
  private readonly eventsConnection: Redis;
  private bundle!: Bundle;
  private queue!: Queue<TrialJobData, TrialResult>;
  private events!: QueueEvents;
  private base!: Omit<TrialJobData, "fixtureHash" | "trial" | "attempt">;
  /** Jobs this run added that no worker has finished. */
  private readonly added = new Set<string>();
  /** How to end the wait for each job in flight. */
  private readonly inFlight = new Map<string, (waited: Waited) => void>();
  /** Jobs being taken back; the watch leaves them to `stopStarting`. */
  private readonly withdrawing = new Set<string>();
  private readonly accepted = new AcceptedResults();
  private stoppedStarting = false;
  private looksWithoutWorker = 0;
  private readonly watching = new AbortController();
  private watch: Promise<void> = Promise.resolve();
  private readonly onStop = () => {
    for (const settle of [...this.inFlight.values()]) settle({ kind: "stopped" });
  };

  constructor(
    private readonly queueOptions: QueueTrialsOptions,
    private readonly setup: PlaceSetup,
  ) {
    this.address = queueOptions.address;
    this.log = queueOptions.log ?? (() => {});
    const onLost = (message: string) => {
      this.lostMessages.push(message);
      setup.stopRun(message);
    };
    this.connection = connect(this.address, "harnesslab-coordinator", onLost);
    this.eventsConnection = connect(this.address, "harnesslab-coordinator-events", onLost);
  }

  private get signal(): AbortSignal {
    return this.setup.signal;
  }

  private isLost(): boolean {
    return this.lostMessages.length > 0;
  }

  /** Reaches Redis, publishes the bundle, opens the queue and its events, starts the watch. */
  async open(): Promise<void> {
    const { experiment, options, inputs, runKey } = this.setup;
    await reach(this.connection, this.address);
    this.bundle = await packBundle(experiment, {
      exclude: [options.outDir],
      sources: inputs.prepared.sourcePaths,
    });
    await this.publishBundle();
    this.queue = new Queue<TrialJobData, TrialResult>(TRIALS_QUEUE, {
      connection: this.connection,
      prefix: KEY_PREFIX,
      // Completion events carry results; the coordinator reads them as they come, and a
      // result it missed is still in its job (kept until accepted).
      streams: { events: { maxLen: 1000 } },
    });
    this.events = new QueueEvents(TRIALS_QUEUE, {
      connection: this.eventsConnection,
      prefix: KEY_PREFIX,
    });
    // What the connections report is acted on through `onLost`; BullMQ's own error events
    // would otherwise be printed once per reconnect attempt.
    this.queue.on("error", () => {});
    this.events.on("error", () => {});
    // Every job waited for listens on both; a run may have thousands in flight.
    this.queue.setMaxListeners(0);
    this.events.setMaxListeners(0);
    await this.events.waitUntilReady();
    this.base = {
      protocol: QUEUE_PROTOCOL,
      harnesslab: HARNESSLAB_VERSION,
      runId: runKey.runId,
      bundle: this.bundle.hash,
      bundleRoot: this.bundle.root,
      trials: experiment.trials.count,
      calibrate: experiment.calibration !== undefined,
      unsafeNoSandbox: inputs.prepared.containment.record.unsafe,
      keepForgeRepos: options.keepForgeRepos === true,
      ...(options.executorGraceMs === undefined
        ? {}
        : { executorGraceMs: options.executorGraceMs }),
      harnessHash: inputs.prepared.harnessHash,
    };
    // One listener for the run's stop ends every wait (its result stays in Redis for --resume).
    this.signal.addEventListener("abort", this.onStop, { once: true });
    this.watch = this.watchJobs();
  }

  private async publishBundle(): Promise<void> {
    await this.connection.set(bundleKey(this.bundle.hash), this.bundle.bytes, "EX", BUNDLE_TTL_S);
  }

  /** Runs one trial attempt on a worker; null when the trial gets no record. */
  async attempt(
    job: TrialJob,
    artifactDir: string,
    retriedAttempts: TrialAttempt[],
  ): Promise<TrialMetrics | null> {
    const attempt = (retriedAttempts.at(-1)?.attempt ?? 0) + 1;
    try {
      const taken = await this.queueUntilRun(job, attempt);
      if (taken.kind === "none") return null;
      return await this.accept(taken.result, job, attempt, artifactDir, retriedAttempts);
    } catch (error) {
      // Redis went away under the job: the run stops (resumable), and the trial has no record.
      if (this.isLost() || this.signal.aborted) return null;
      throw error;
    }
  }

  /**
   * Queues the attempt and waits for its result. A worker that found the run's bundle gone from
   * Redis (evicted, expired) ran nothing: the bundle is published again and the same attempt
   * queued again, so an eviction costs a delay, never a trial.
   */
  private async queueUntilRun(job: TrialJob, attempt: number): Promise<Taken> {
    const id = `${this.setup.runKey.runId}-${job.seq}-${attempt}`;
    for (let republished = 0; ; republished += 1) {
      const taken = await this.queueOnce(job, attempt, id);
      if (taken.kind === "none") return taken;
      const { result } = taken;
      if (result.kind !== "refused" || result.code !== "bundle-missing") return taken;
      if (republished === BUNDLE_REPUBLISHES)
        throw new Error(
          `the run's bundle was gone from Redis at ${this.address.shown} each of the ${BUNDLE_REPUBLISHES + 1} times a worker took trial ${job.seq}, although this run published it again each time: Redis is evicting it (check its maxmemory and maxmemory-policy); ${result.message}`,
        );
      await this.publishBundle();
      this.log(
        `queue: worker ${result.worker} found the run's bundle gone from Redis at ${this.address.shown}; published it again and queued trial ${job.seq} again`,
      );
    }
  }

  /** Adds the job (or finds it there) and waits for it once. */
  private async queueOnce(job: TrialJob, attempt: number, id: string): Promise<Taken> {
    if (this.stoppedStarting || this.signal.aborted) return { kind: "none" };
    const data: TrialJobData = {
      ...this.base,
      fixtureHash: this.setup.inputs.before.get(job.task)!.hash,
      trial: { seq: job.seq, task: job.task, variant: job.variant, trialIndex: job.trialIndex },
      attempt,
    };
    // A job already there under this id (a resumed run, or a second look) is the same
    // attempt: BullMQ hands it back instead of adding another.
    const queued = await this.queue.add("trial", data, {
      jobId: id,
      attempts: 1,
      removeOnComplete: false,
      removeOnFail: false,
    });
    this.added.add(id);
    // The run stopped starting trials while this one was being added: take it back, unless a
    // worker already has it.
    if ((this.stoppedStarting || this.signal.aborted) && (await this.withdraw(id)))
      return { kind: "none" };
    await this.connection.expire(bundleKey(this.bundle.hash), BUNDLE_TTL_S);
    const waited = await this.waitFor(queued, id);
    if (waited.kind !== "stopped") this.added.delete(id);
    if (waited.kind === "withdrawn" || waited.kind === "stopped") return { kind: "none" };
    if (waited.kind === "gone")
      throw new Error(
        `the trial's job ${id} is gone from Redis at ${this.address.shown} (Redis lost its data, or the job was removed); \`compare run --resume --retry-infra 1\` runs the trial again`,
      );
    await this.queue.remove(id).catch(() => {});
    if (waited.kind === "failed")
      throw new Error(`the trial's job ${id} failed on its worker: ${waited.message}`);
    const result = trialResultSchema.safeParse(waited.value);
    if (!result.success)
      throw new Error(
        `the trial's job ${id} came back with something that is not a queue protocol ${QUEUE_PROTOCOL} result`,
      );
    return { kind: "result", result: result.data };
  }

  /** Checks a worker's result and writes the trial's folder; null when it is not taken. */
  private async accept(
    result: TrialResult,
    job: TrialJob,
    attempt: number,
    artifactDir: string,
    retriedAttempts: TrialAttempt[],
  ): Promise<TrialMetrics | null> {
    if (!this.accepted.claim(job.seq, attempt)) {
      this.log(`queue: a second result for trial ${job.seq}, attempt ${attempt}, was ignored`);
      return null;
    }
    if (result.kind === "refused") {
      if (result.code === "version") {
        this.setup.stopRun(result.message);
        return null;
      }
      throw new Error(result.message);
    }
    const checked = checkTrialResult(result, job);
    if (!checked.ok) throw new Error(checked.message);
    await writeTrialFolder(artifactDir, checked.files);
    // The attempts are the coordinator's to count: it archived them.
    return { ...checked.metrics, retriedAttempts };
  }

  private waitFor(job: Job<TrialJobData, TrialResult>, id: string): Promise<Waited> {
    return new Promise<Waited>((resolve) => {
      let settled = false;
      const settle = (waited: Waited) => {
        if (settled) return;
        settled = true;
        this.inFlight.delete(id);
        resolve(waited);
      };
      this.inFlight.set(id, settle);
      if (this.signal.aborted) settle({ kind: "stopped" });
      job.waitUntilFinished(this.events).then(
        (value: unknown) => settle({ kind: "completed", value }),
        // BullMQ says so when the job's key went from Redis while it was waited for.
        (error: Error) =>
          settle(
            /^Missing key for job /.test(error.message)
              ? { kind: "gone" }
              : { kind: "failed", message: error.message },
          ),
      );
    });
  }

  /** Takes a queued job back; false when a worker already holds it (or it is gone). */
  private async withdraw(id: string): Promise<boolean> {
    this.withdrawing.add(id);
    try {
      const removed = await this.queue.remove(id).catch(() => 0);
      if (removed !== 1) return false;
      this.added.delete(id);
      this.inFlight.get(id)?.({ kind: "withdrawn" });
      return true;
    } finally {
      this.withdrawing.delete(id);
    }
  }

  private async watchJobs(): Promise<void> {
    const { signal } = this.watching;
    while (!signal.aborted) {
      await sleep(this.queueOptions.watchMs ?? WATCH_MS, undefined, { signal }).catch(() => {});
      if (signal.aborted || this.isLost()) return;
      // A Redis error here is the connection's to report (`onLost`); the next look tries again.
      await this.look().catch(() => {});
    }
  }

  /** One look at the run's jobs in Redis (see WATCH_MS). */
  private async look(): Promise<void> {
    if (this.inFlight.size === 0) {
      this.looksWithoutWorker = 0;
      return;
    }
    const key = bundleKey(this.bundle.hash);
    if ((await this.connection.exists(key)) === 0) {
      await this.publishBundle();
      this.log(
        `queue: the run's bundle was gone from Redis at ${this.address.shown}; published it again`,
      );
    }
    await this.settleFinishedJobs();
    if ((await this.queue.getWorkersCount()) > 0) {
      this.looksWithoutWorker = 0;
      return;
    }
    this.looksWithoutWorker += 1;
    if (this.looksWithoutWorker === NO_WORKER_LOOKS)
      this.log(
        `queue: no worker is taking trials from ${this.address.shown}; start one with \`harness worker --queue ${this.address.shown}\` (docs/scale-out.md)`,
      );
  }

  /**
   * Ends the waits whose jobs finished or vanished without an event this run heard. The state is
   * read first and the job after it: a job read first and found finished after would carry the
   * result it had before it finished (none).
   */
  private async settleFinishedJobs(): Promise<void> {
    for (const id of [...this.inFlight.keys()]) {
      if (this.withdrawing.has(id)) continue;
      const state = await this.queue.getJobState(id);
      if (state !== "completed" && state !== "failed" && state !== "unknown") continue;
      const job = state === "unknown" ? undefined : await this.queue.getJob(id);
      const settle = this.inFlight.get(id);
      if (settle === undefined || this.withdrawing.has(id)) continue;
      if (job === undefined) settle({ kind: "gone" });
      else if (state === "completed") settle({ kind: "completed", value: job.returnvalue });
      else settle({ kind: "failed", message: job.failedReason });
    }
  }

  async stopStarting(): Promise<void> {
    this.stoppedStarting = true;
    // Removed only while no worker holds it; a running trial finishes (and is accepted
    // unless the run was stopped, when its result waits in Redis for --resume).
    await Promise.all([...this.added].map((id) => this.withdraw(id)));
  }

  async close(): Promise<void> {
    this.signal.removeEventListener("abort", this.onStop);
    this.watching.abort();
    await this.watch;
    // A lost Redis never answers: closing does not wait for it. The timer is cleared once
    // closing is done, or it would keep the process alive for the rest of its 5 s.
    const closing = Promise.all([this.events.close(), this.queue.close()]).catch(() => {});
    const waited = new AbortController();
    const timeout = sleep(this.isLost() ? 0 : 5_000, undefined, { signal: waited.signal });
    await Promise.race([closing, timeout.catch(() => {})]);
    waited.abort();
    this.connection.disconnect();
    this.eventsConnection.disconnect();
  }
}

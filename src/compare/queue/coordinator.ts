// `compare run --queue`: the run's trials go to workers through Redis instead of this process's
// pool. Everything else is the local run's: the plan, the lock, --resume, --retry-infra,
// --stop-early, the progress line, the records (sealed here with the run's key, which never
// leaves this machine) and the verdict. One BullMQ job per trial attempt, its id the run's id,
// the trial's number and the attempt, so a job is never added twice and a result is accepted once.
import { setTimeout as sleep } from "node:timers/promises";
import { type Job, Queue, QueueEvents } from "bullmq";
import type { TrialAttempt, TrialMetrics } from "../../artifacts/index.js";
import type { TrialJob } from "../experiment.js";
import type { TrialPlaceFactory } from "../run/runner.js";
import { AcceptedResults, checkTrialResult, writeTrialFolder } from "./accept.js";
import { packBundle } from "./bundle.js";
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

export interface QueueTrialsOptions {
  address: QueueAddress;
  log?: (line: string) => void;
  /** How often the jobs are looked at in Redis besides their events (default 2 s). */
  watchMs?: number;
}

/** The queue as the place a run's trials run in. */
export function queueTrials(queueOptions: QueueTrialsOptions): TrialPlaceFactory {
  return async ({ experiment, options, inputs, runKey, signal, stopRun }) => {
    const { address } = queueOptions;
    const lostMessages: string[] = [];
    const onLost = (message: string) => {
      lostMessages.push(message);
      stopRun(message);
    };
    const connection = connect(address, "harnesslab-coordinator", onLost);
    const eventsConnection = connect(address, "harnesslab-coordinator-events", onLost);
    const isLost = () => lostMessages.length > 0;
    await reach(connection, address);
    const bundle = await packBundle(experiment, { exclude: [options.outDir] });
    await connection.set(bundleKey(bundle.hash), bundle.bytes, "EX", BUNDLE_TTL_S);
    const queue = new Queue<TrialJobData, TrialResult>(TRIALS_QUEUE, {
      connection,
      prefix: KEY_PREFIX,
      // Completion events carry results; the coordinator reads them as they come, and a
      // result it missed is still in its job (kept until accepted).
      streams: { events: { maxLen: 1000 } },
    });
    const events = new QueueEvents(TRIALS_QUEUE, {
      connection: eventsConnection,
      prefix: KEY_PREFIX,
    });
    queue.on("error", () => {});
    events.on("error", () => {});
    // Every job waited for listens on both; a run may have thousands in flight.
    queue.setMaxListeners(0);
    events.setMaxListeners(0);
    await events.waitUntilReady();
    /** Jobs this run added that no worker has finished, and how to end a wait for one. */
    const added = new Set<string>();
    const inFlight = new Map<string, (waited: Waited) => void>();
    /** Jobs being taken back; the watch leaves them to `stopStarting`. */
    const withdrawing = new Set<string>();
    const accepted = new AcceptedResults();
    let stoppedStarting = false;
    const log = queueOptions.log ?? (() => {});

    const base = {
      protocol: QUEUE_PROTOCOL,
      harnesslab: HARNESSLAB_VERSION,
      runId: runKey.runId,
      bundle: bundle.hash,
      bundleRoot: bundle.root,
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
    const onStop = () => {
      for (const settle of [...inFlight.values()]) settle({ kind: "stopped" });
    };
    signal.addEventListener("abort", onStop, { once: true });
    // What the connections report is acted on through `onLost`; BullMQ's own error events
    // would otherwise be printed once per reconnect attempt.
    const waitFor = (job: Job<TrialJobData, TrialResult>, id: string): Promise<Waited> =>
      new Promise<Waited>((resolve) => {
        let settled = false;
        const settle = (waited: Waited) => {
          if (settled) return;
          settled = true;
          inFlight.delete(id);
          resolve(waited);
        };
        inFlight.set(id, settle);
        if (signal.aborted) settle({ kind: "stopped" });
        job.waitUntilFinished(events).then(
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

    /** The job's result as the coordinator takes it, or why the trial has none. */
    const take = async (
      job: TrialJob,
      id: string,
      artifactDir: string,
      retriedAttempts: TrialAttempt[],
    ): Promise<TrialMetrics | null> => {
      const attempt = (retriedAttempts.at(-1)?.attempt ?? 0) + 1;
      const data: TrialJobData = {
        ...base,
        fixtureHash: inputs.before.get(job.task)!.hash,
        trial: { seq: job.seq, task: job.task, variant: job.variant, trialIndex: job.trialIndex },
        attempt,
      };
      if (stoppedStarting || signal.aborted) return null;
      // A job already there under this id (a resumed run, or a second look) is the same
      // attempt: BullMQ hands it back instead of adding another.
      const queued = await queue.add("trial", data, {
        jobId: id,
        attempts: 1,
        removeOnComplete: false,
        removeOnFail: false,
      });
      added.add(id);
      // The run stopped starting trials while this one was being added: take it back, unless a
      // worker already has it.
      if ((stoppedStarting || signal.aborted) && (await withdraw(id))) return null;
      await connection.expire(bundleKey(bundle.hash), BUNDLE_TTL_S);
      const waited = await waitFor(queued, id);
      if (waited.kind !== "stopped") added.delete(id);
      if (waited.kind === "withdrawn" || waited.kind === "stopped") return null;
      if (waited.kind === "gone")
        throw new Error(
          `the trial's job ${id} is gone from Redis at ${address.shown} (Redis lost its data, or the job was removed); \`compare run --resume --retry-infra 1\` runs the trial again`,
        );
      if (waited.kind === "failed") {
        await queue.remove(id).catch(() => {});
        throw new Error(`the trial's job ${id} failed on its worker: ${waited.message}`);
      }
      const result = trialResultSchema.safeParse(waited.value);
      await queue.remove(id).catch(() => {});
      if (!result.success)
        throw new Error(
          `the trial's job ${id} came back with something that is not a queue protocol ${QUEUE_PROTOCOL} result`,
        );
      if (!accepted.claim(job.seq, attempt)) {
        log(`queue: a second result for trial ${job.seq}, attempt ${attempt}, was ignored`);
        return null;
      }
      if (result.data.kind === "refused") {
        if (result.data.code === "version") {
          stopRun(result.data.message);
          return null;
        }
        throw new Error(result.data.message);
      }
      const checked = checkTrialResult(result.data, job);
      if (!checked.ok) throw new Error(checked.message);
      await writeTrialFolder(artifactDir, checked.files);
      // The attempts are the coordinator's to count: it archived them.
      return { ...checked.metrics, retriedAttempts };
    };

    /** Takes a queued job back; false when a worker already holds it (or it is gone). */
    const withdraw = async (id: string): Promise<boolean> => {
      withdrawing.add(id);
      try {
        const removed = await queue.remove(id).catch(() => 0);
        if (removed !== 1) return false;
        added.delete(id);
        inFlight.get(id)?.({ kind: "withdrawn" });
        return true;
      } finally {
        withdrawing.delete(id);
      }
    };

    /** One look at the run's jobs in Redis (see WATCH_MS). */
    let looksWithoutWorker = 0;
    const look = async () => {
      if (inFlight.size === 0) {
        looksWithoutWorker = 0;
        return;
      }
      const key = bundleKey(bundle.hash);
      if ((await connection.exists(key)) === 0) {
        await connection.set(key, bundle.bytes, "EX", BUNDLE_TTL_S);
        log(`queue: the run's bundle was gone from Redis at ${address.shown}; published it again`);
      }
      for (const id of [...inFlight.keys()]) {
        if (withdrawing.has(id)) continue;
        const job = await queue.getJob(id);
        const settle = inFlight.get(id);
        if (settle === undefined || withdrawing.has(id)) continue;
        if (job === undefined) {
          settle({ kind: "gone" });
          continue;
        }
        const state = await job.getState();
        if (state === "completed") settle({ kind: "completed", value: job.returnvalue });
        else if (state === "failed") settle({ kind: "failed", message: job.failedReason });
      }
      if ((await queue.getWorkersCount()) > 0) {
        looksWithoutWorker = 0;
        return;
      }
      looksWithoutWorker += 1;
      if (looksWithoutWorker === NO_WORKER_LOOKS)
        log(
          `queue: no worker is taking trials from ${address.shown}; start one with \`harness worker --queue ${address.shown}\` (docs/scale-out.md)`,
        );
    };
    const watching = new AbortController();
    const watch = (async () => {
      while (!watching.signal.aborted) {
        await sleep(queueOptions.watchMs ?? WATCH_MS, undefined, {
          signal: watching.signal,
        }).catch(() => {});
        if (watching.signal.aborted || isLost()) return;
        // A Redis error here is the connection's to report (`onLost`); the next look tries again.
        await look().catch(() => {});
      }
    })();

    return {
      // Every pending trial waits in the queue for a worker; a budget is checked before each
      // job is added, so with one the manifest's concurrency bounds the jobs in the queue.
      ...(options.budget === undefined ? { concurrency: Math.max(1, inputs.jobs.length) } : {}),
      attempt: async (job, artifactDir, retriedAttempts) => {
        const attempt = (retriedAttempts.at(-1)?.attempt ?? 0) + 1;
        const id = `${runKey.runId}-${job.seq}-${attempt}`;
        try {
          return await take(job, id, artifactDir, retriedAttempts);
        } catch (error) {
          // Redis went away under the job: the run stops (resumable), and the trial has no record.
          if (isLost() || signal.aborted) return null;
          throw error;
        }
      },
      stopStarting: async () => {
        stoppedStarting = true;
        // Removed only while no worker holds it; a running trial finishes (and is accepted
        // unless the run was stopped, when its result waits in Redis for --resume).
        await Promise.all([...added].map(withdraw));
      },
      close: async () => {
        signal.removeEventListener("abort", onStop);
        watching.abort();
        await watch;
        // A lost Redis never answers: closing does not wait for it. The timer is cleared once
        // closing is done, or it would keep the process alive for the rest of its 5 s.
        const closing = Promise.all([events.close(), queue.close()]).catch(() => {});
        const waited = new AbortController();
        const timeout = sleep(isLost() ? 0 : 5_000, undefined, { signal: waited.signal });
        await Promise.race([closing, timeout.catch(() => {})]);
        waited.abort();
        connection.disconnect();
        eventsConnection.disconnect();
      },
    };
  };
}

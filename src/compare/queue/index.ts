// The queue room: a run's trials on other machines, through Redis and BullMQ
// (docs/scale-out.md). The coordinator side is a place for the runner's trials; the worker side
// runs them with the same `runTrial` a local run uses. BullMQ and the Redis client are loaded
// only when a queue is used: a local run never pays for them.
import type { TrialPlaceFactory } from "../run/runner.js";
import type { QueueAddress } from "./address.js";
import type { QueueTrialsOptions } from "./coordinator.js";
import type { WorkerOptions } from "./worker.js";

export { parseQueueUrl, type QueueAddress } from "./address.js";
export type { QueueTrialsOptions } from "./coordinator.js";
export type { WorkerOptions } from "./worker.js";

/** Checks that Redis answers at `address` before a run writes anything; says why not. */
export async function probeQueue(address: QueueAddress): Promise<string | undefined> {
  return (await import("./connection.js")).probeQueue(address);
}

/** The place for a run's trials: a queue that workers take them from. */
export function queueTrials(options: QueueTrialsOptions): TrialPlaceFactory {
  return async (setup) => (await import("./coordinator.js")).queueTrials(options)(setup);
}

/** Takes a queue's trials and runs them here until stopped. */
export async function runWorker(options: WorkerOptions): Promise<void> {
  return (await import("./worker.js")).runWorker(options);
}

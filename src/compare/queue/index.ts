// The queue room: a run's trials on other machines, through Redis and BullMQ
// (docs/scale-out.md). The coordinator side is a place for the runner's trials; the worker side
// runs them with the same `runTrial` a local run uses.
export { parseQueueUrl, probeQueue, type QueueAddress } from "./connection.js";
export { type QueueTrialsOptions, queueTrials } from "./coordinator.js";

export { runWorker, type WorkerOptions } from "./worker.js";

// What travels through Redis between a run's coordinator and its workers: one job per trial
// attempt and its result. Shapes only; both sides check what they read against them.
import { createRequire } from "node:module";
import { z } from "zod";
import { trialMetricsSchema } from "../../artifacts/index.js";

/** Bumped whenever a job's or a result's shape, or what a worker does with it, changes. */
export const QUEUE_PROTOCOL = 1;

export const HARNESSLAB_VERSION = (
  createRequire(import.meta.url)("../../../package.json") as { version: string }
).version;

/** The BullMQ queue every trial job goes to, under the key prefix below. */
export const TRIALS_QUEUE = "trials";
export const KEY_PREFIX = "harnesslab";

/** Where a bundle's bytes live in Redis. */
export const bundleKey = (hash: string) => `${KEY_PREFIX}:bundle:${hash}`;

/** The most bytes a worker returns for one trial folder (compressed). */
export const MAX_RESULT_BYTES = 256 * 1024 * 1024;

/**
 * One attempt of one trial. Its BullMQ id is `<run id>-<seq>-<attempt>`, so adding it again (a
 * resumed coordinator) finds the job already there instead of running the trial twice.
 */
export const trialJobSchema = z.strictObject({
  protocol: z.int(),
  harnesslab: z.string(),
  runId: z.string(),
  bundle: z.string().regex(/^sha256:[0-9a-f]{64}$/),
  /** Where the bundle's files are on the coordinator: records name them so, as a local run's do. */
  bundleRoot: z.string(),
  /** The effective trial count (`--trials`) the coordinator loaded the manifest with. */
  trials: z.int().min(1),
  /** `--calibrate`: the baseline against a copy of itself. */
  calibrate: z.boolean(),
  /** `--unsafe-no-sandbox` on the coordinator; a worker honours it only when started with it. */
  unsafeNoSandbox: z.boolean(),
  keepForgeRepos: z.boolean(),
  executorGraceMs: z.int().min(0).optional(),
  /** What the worker's copy must reproduce: the variants' assembly and the task's fixture. */
  harnessHash: z.string(),
  fixtureHash: z.string(),
  trial: z.strictObject({
    seq: z.int().min(1),
    task: z.string(),
    variant: z.string(),
    trialIndex: z.int().min(1),
  }),
  attempt: z.int().min(1),
});
export type TrialJobData = z.infer<typeof trialJobSchema>;

/**
 * Why a worker did not run a job. `version` stops the run; the others are the trial's
 * infrastructure error. (What the worker's own machine lacks is no refusal: the worker hands the
 * job back and stops.)
 */
const REFUSALS = ["version", "bundle-missing", "bundle-invalid", "inputs-differ"] as const;

export const trialResultSchema = z.discriminatedUnion("kind", [
  z.strictObject({
    kind: z.literal("trial"),
    worker: z.string(),
    /** The attempt's metrics, unsealed: the coordinator seals them. */
    metrics: trialMetricsSchema.omit({ seal: true }),
    /** The trial folder's other files: gzip of a JSON object from name to base64 content. */
    files: z.string(),
  }),
  z.strictObject({
    kind: z.literal("refused"),
    worker: z.string(),
    code: z.enum(REFUSALS),
    message: z.string(),
  }),
]);
export type TrialResult = z.infer<typeof trialResultSchema>;

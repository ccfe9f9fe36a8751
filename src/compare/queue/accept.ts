// What a coordinator accepts from a worker as a trial's folder: only the files a trial folder
// has, each of the shape its schema gives, for the trial the job named. A worker is the user's
// own machine, but what it returns crossed Redis: it is checked as any other input before it
// becomes a record the coordinator seals.
import { mkdir, readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { z } from "zod";
import {
  type TrialMetrics,
  toolUseDocumentSchema,
  validationDocumentSchema,
} from "../../artifacts/index.js";
import {
  permissionDecisionsSchema,
  runtimeReceiptSchema,
  traceEventSchema,
} from "../../exec/index.js";
import { writeLogSchema } from "../../forge/index.js";
import { repoStateSchema } from "../../scoring/index.js";
import { writeFileAtomic } from "../../shared/index.js";
import type { TrialJob } from "../experiment.js";
import { WORKSPACE_MARKER } from "../run/workspace-marker.js";
import { MAX_RESULT_BYTES, type TrialResult } from "./protocol.js";

type Check = (bytes: Buffer) => string | null;

const utf8 = new TextDecoder("utf-8", { fatal: true });

function text(bytes: Buffer): string | null {
  try {
    utf8.decode(bytes);
    return null;
  } catch {
    return "is not UTF-8 text";
  }
}

function json(schema: z.ZodType): Check {
  return (bytes) => {
    let value: unknown;
    try {
      value = JSON.parse(utf8.decode(bytes));
    } catch {
      return "is not JSON";
    }
    const parsed = schema.safeParse(value);
    return parsed.success
      ? null
      : `does not match its schema: ${parsed.error.issues[0]?.message ?? ""}`;
  };
}

function jsonLines(schema: z.ZodType): Check {
  return (bytes) => {
    const lines = utf8
      .decode(bytes)
      .split("\n")
      .filter((line) => line !== "");
    for (const [index, line] of lines.entries()) {
      const problem = json(schema)(Buffer.from(line));
      if (problem !== null) return `line ${index + 1} ${problem}`;
    }
    return null;
  };
}

/** Every file a trial folder may hold besides metrics.json, with its check; `true` when required. */
const TRIAL_FILES: Record<string, { check: Check; required: boolean }> = {
  "prompt.txt": { check: text, required: true },
  "response.txt": { check: text, required: true },
  "stderr.txt": { check: text, required: true },
  // The patch is stored byte for byte (it may carry binary or non-UTF-8 content).
  "patch.diff": { check: () => null, required: true },
  "trace.jsonl": { check: jsonLines(traceEventSchema), required: true },
  "permission-decisions.json": { check: json(permissionDecisionsSchema), required: true },
  "validation.json": { check: json(validationDocumentSchema), required: true },
  "runtime-receipt.json": { check: json(runtimeReceiptSchema.nullable()), required: true },
  "tool-use.json": { check: json(toolUseDocumentSchema), required: true },
  "forge-before.json": { check: json(repoStateSchema), required: false },
  "forge-after.json": { check: json(repoStateSchema), required: false },
  "forge-write-log.json": { check: json(writeLogSchema), required: false },
};

export type CheckedFolder =
  | { ok: true; metrics: TrialMetrics; files: Array<[string, Buffer]> }
  | { ok: false; message: string };

/** Checks a worker's trial folder for `job`; nothing is written. */
export function checkTrialResult(
  result: Extract<TrialResult, { kind: "trial" }>,
  job: TrialJob,
): CheckedFolder {
  const fail = (message: string): CheckedFolder => ({
    ok: false,
    message: `worker ${result.worker} returned a trial folder that is not accepted: ${message}`,
  });
  const { metrics } = result;
  if (
    metrics.seq !== job.seq ||
    metrics.task !== job.task ||
    metrics.variant !== job.variant ||
    metrics.trial !== job.trialIndex
  )
    return fail(
      `its metrics are of trial ${metrics.seq} (${metrics.variant}/${metrics.task} #${metrics.trial}), not of trial ${job.seq} (${job.variant}/${job.task} #${job.trialIndex})`,
    );
  let decoded: unknown;
  try {
    const packed = Buffer.from(result.files, "base64");
    decoded = JSON.parse(
      gunzipSync(packed, { maxOutputLength: 2 * MAX_RESULT_BYTES }).toString("utf8"),
    );
  } catch (error) {
    return fail(`its files cannot be read (${(error as Error).message})`);
  }
  const names = z.record(z.string(), z.string()).safeParse(decoded);
  if (!names.success) return fail("its files are not a map of names to contents");
  const files: Array<[string, Buffer]> = [];
  for (const [name, content] of Object.entries(names.data)) {
    const spec = Object.hasOwn(TRIAL_FILES, name) ? TRIAL_FILES[name] : undefined;
    if (spec === undefined) return fail(`${JSON.stringify(name)} is not a file of a trial folder`);
    const bytes = Buffer.from(content, "base64");
    const problem = spec.check(bytes);
    if (problem !== null) return fail(`${name} ${problem}`);
    files.push([name, bytes]);
  }
  const missing = Object.entries(TRIAL_FILES)
    .filter(([name, spec]) => spec.required && names.data[name] === undefined)
    .map(([name]) => name);
  if (missing.length > 0) return fail(`it lacks ${missing.join(", ")}`);
  return { ok: true, metrics: metrics as TrialMetrics, files };
}

/** Writes an accepted folder's files, each whole or not at all (metrics.json comes later, sealed). */
export async function writeTrialFolder(
  artifactDir: string,
  files: ReadonlyArray<[string, Buffer]>,
): Promise<void> {
  await mkdir(artifactDir, { recursive: true });
  for (const [name, bytes] of files) await writeFileAtomic(join(artifactDir, name), bytes);
}

/**
 * A worker's trial folder (it has no subfolder there) as one compressed value for its result:
 * the trial's files, not the worker's own notes (the marker of a workspace it could not remove
 * is for a `--resume` on the worker's disk, which never happens).
 */
export async function packTrialFolder(dir: string): Promise<Buffer> {
  const files: Record<string, string> = {};
  for (const name of (await readdir(dir)).sort())
    if (name !== WORKSPACE_MARKER)
      files[name] = (await readFile(join(dir, name))).toString("base64");
  return gzipSync(Buffer.from(JSON.stringify(files)));
}

/**
 * The trial attempts a coordinator took a result for. BullMQ completes a job once, but a job
 * that stalled (its worker killed) runs again, and nothing may let two results of one attempt
 * both become its record: the first is taken, any other ignored.
 */
export class AcceptedResults {
  readonly #taken = new Set<string>();

  /** True the first time for a trial's attempt, false for every later result of it. */
  claim(seq: number, attempt: number): boolean {
    const key = `${seq}:${attempt}`;
    if (this.#taken.has(key)) return false;
    this.#taken.add(key);
    return true;
  }
}

// Glob and Grep for the scripted host, run off the main thread under a hard time limit. Their
// patterns come from the agent: a regular expression with catastrophic backtracking
// (`^(a+)+$`) or a pathological glob would otherwise block the harness's event loop, and with
// it every timer that is meant to stop the trial. A worker thread that runs too long is
// terminated, which interrupts even a regular expression in the middle of a match.
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

interface GrepMatchFound {
  path: string;
  line: number;
  text: string;
}

export type SearchJob =
  | { kind: "glob"; cwd: string; pattern: string; ignore: string[]; limit: number }
  | {
      kind: "grep";
      /** Absolute base; `relativeBase` is how results name it. */
      base: string;
      baseIsFile: boolean;
      pattern: string;
      ignore: string[];
      maxFileBytes: number;
      maxMatches: number;
    };

export type SearchResult =
  | { ok: true; files: string[] }
  | { ok: true; matches: GrepMatchFound[] }
  | { ok: false; error: string };

/**
 * The worker's program. It is plain CommonJS given as source, so the same code runs from the
 * built package and from the TypeScript sources under test. Files are opened without following
 * symlinks and without blocking, and only regular files are read.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const fs = require("node:fs");
const path = require("node:path");
const { glob } = require(workerData.tinyglobby);
const FLAGS = fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW || 0) | (fs.constants.O_NONBLOCK || 0);
function readSmallRegularFile(file, max) {
  let fd;
  try { fd = fs.openSync(file, FLAGS); } catch { return null; }
  try {
    const stats = fs.fstatSync(fd);
    if (!stats.isFile() || stats.size > max) return null;
    const buffer = Buffer.alloc(stats.size);
    let filled = 0;
    while (filled < buffer.length) {
      const read = fs.readSync(fd, buffer, filled, buffer.length - filled, filled);
      if (read === 0) break;
      filled += read;
    }
    return buffer.subarray(0, filled);
  } finally { fs.closeSync(fd); }
}
async function run(job) {
  if (job.kind === "glob") {
    const found = await glob(job.pattern, { cwd: job.cwd, dot: true, onlyFiles: true, followSymbolicLinks: false, ignore: job.ignore });
    return { ok: true, files: found.sort().slice(0, job.limit) };
  }
  let regex;
  try { regex = new RegExp(job.pattern); } catch (error) { return { ok: false, error: "invalid regular expression: " + error.message }; }
  const candidates = job.baseIsFile ? [""] : (await glob("**/*", { cwd: job.base, dot: true, onlyFiles: true, followSymbolicLinks: false, ignore: job.ignore })).sort();
  const matches = [];
  for (const relative of candidates) {
    if (matches.length >= job.maxMatches) break;
    const content = readSmallRegularFile(relative === "" ? job.base : path.join(job.base, relative), job.maxFileBytes);
    if (content === null || content.includes(0)) continue;
    const lines = content.toString("utf8").split(/\\r?\\n/);
    for (let index = 0; index < lines.length && matches.length < job.maxMatches; index += 1) {
      if (regex.test(lines[index])) matches.push({ path: relative, line: index + 1, text: lines[index] });
    }
  }
  return { ok: true, matches };
}
parentPort.once("message", (job) => {
  run(job).then((result) => parentPort.postMessage(result), (error) => parentPort.postMessage({ ok: false, error: String(error && error.message || error) }));
});
`;

const tinyglobby = createRequire(import.meta.url).resolve("tinyglobby");

/** Default wall-clock limit of one Glob or Grep call. */
const SEARCH_TIME_LIMIT_MS = 10_000;

/**
 * Runs one search in a fresh worker thread and terminates it at `timeLimitMs` (or when `signal`
 * aborts). The worker's heap is capped too, so a search cannot exhaust the harness's memory.
 */
export function runSearch(
  job: SearchJob,
  options: { timeLimitMs?: number; signal?: AbortSignal } = {},
): Promise<SearchResult> {
  const limit = options.timeLimitMs ?? SEARCH_TIME_LIMIT_MS;
  return new Promise((resolve) => {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { tinyglobby },
      resourceLimits: { maxOldGenerationSizeMb: 256, maxYoungGenerationSizeMb: 32 },
      stdout: true,
      stderr: true,
    });
    let done = false;
    const finish = (result: SearchResult) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      void worker.terminate();
      resolve(result);
    };
    const onAbort = () =>
      finish({ ok: false, error: "the trial has ended; the search was stopped" });
    const timer = setTimeout(
      () =>
        finish({
          ok: false,
          error: `the search ran longer than ${limit} ms and was stopped (a pattern that backtracks catastrophically, or too large a tree)`,
        }),
      limit,
    );
    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener("abort", onAbort, { once: true });
    worker.once("message", (result: SearchResult) => finish(result));
    worker.once("error", (error) =>
      finish({ ok: false, error: `the search failed: ${error.message}` }),
    );
    worker.once("exit", () => finish({ ok: false, error: "the search stopped unexpectedly" }));
    worker.postMessage(job);
  });
}

// What a coordinator takes from a worker: a real trial folder, packed as a worker packs it, is
// accepted; a folder that names a file outside the trial, carries a record of its own, breaks a
// schema or belongs to another trial is refused with what is wrong; a second result for the
// same trial attempt is ignored. No Redis: these are the checks, fed what Redis would carry.
import { join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TrialMetrics, VerdictDocument } from "../../src/artifacts/index.js";
import type { TrialJob } from "../../src/compare/index.js";
import {
  AcceptedResults,
  checkTrialResult,
  packTrialFolder,
} from "../../src/compare/queue/accept.js";
import type { TrialResult } from "../../src/compare/queue/protocol.js";
import {
  makeExperiment,
  readJson,
  runManifest,
  type TempExperiment,
  TRIAL_FILES,
} from "../support/experiment.js";

type Folder = Extract<TrialResult, { kind: "trial" }>;

let exp: TempExperiment;
let result: Folder;
let job: TrialJob;

/** The packed files of `result` with `change` applied (name → content, or undefined to drop). */
function withFiles(change: Record<string, string | undefined>): Folder {
  const files = JSON.parse(gunzipSync(Buffer.from(result.files, "base64")).toString()) as Record<
    string,
    string
  >;
  for (const [name, content] of Object.entries(change))
    if (content === undefined) delete files[name];
    else files[name] = Buffer.from(content).toString("base64");
  return { ...result, files: gzipSync(Buffer.from(JSON.stringify(files))).toString("base64") };
}

beforeAll(async () => {
  exp = await makeExperiment();
  const { verdict } = await runManifest(exp.manifestPath, {
    outDir: exp.outDir,
    tempParent: exp.trialsDir,
  });
  const trial = (verdict as VerdictDocument).trials[0]!;
  const dir = join(exp.outDir, trial.artifactDir);
  const { seal: _seal, ...metrics } = (await readJson(dir, "metrics.json")) as TrialMetrics;
  // A worker's folder has no metrics.json: the coordinator writes it, sealed.
  const packed = JSON.parse(gunzipSync(await packTrialFolder(dir)).toString()) as Record<
    string,
    string
  >;
  delete packed["metrics.json"];
  result = {
    kind: "trial",
    worker: "w1",
    metrics,
    files: gzipSync(Buffer.from(JSON.stringify(packed))).toString("base64"),
  };
  job = { seq: trial.seq, task: trial.task, variant: trial.variant, trialIndex: trial.trial };
}, 60_000);

afterAll(async () => {
  await exp?.cleanup();
});

describe("a worker's trial folder", () => {
  it("is accepted with every file of a trial folder and metrics of the job's trial", () => {
    const checked = checkTrialResult(result, job);
    expect(checked.ok).toBe(true);
    if (checked.ok)
      expect(checked.files.map(([name]) => name).sort()).toEqual(
        TRIAL_FILES.filter((name) => name !== "metrics.json"),
      );
  });

  it.each([
    ["../../escape.txt", "x", '"../../escape.txt" is not a file of a trial folder'],
    ["metrics.json", "{}", '"metrics.json" is not a file of a trial folder'],
    ["attempts", "x", '"attempts" is not a file of a trial folder'],
    ["validation.json", '{"grades": "all passed"}', "validation.json does not match its schema"],
    ["tool-use.json", "not json", "tool-use.json is not JSON"],
    ["trace.jsonl", '{"type":"message"}\nnot json\n', "trace.jsonl line 2 is not JSON"],
    ["prompt.txt", undefined, "it lacks prompt.txt"],
  ])("is refused when it holds %s = %j", (name, content, message) => {
    const checked = checkTrialResult(withFiles({ [name]: content }), job);
    expect(checked).toMatchObject({ ok: false });
    if (!checked.ok) {
      expect(checked.message).toContain("worker w1 returned a trial folder that is not accepted");
      expect(checked.message).toContain(message);
    }
  });

  it("is refused when its metrics are another trial's", () => {
    const checked = checkTrialResult(result, { ...job, seq: job.seq + 1 });
    expect(checked).toMatchObject({ ok: false });
    if (!checked.ok)
      expect(checked.message).toMatch(/its metrics are of trial \d+ .*, not of trial/);
  });

  it("is refused when its files are not the compressed map a worker sends", () => {
    const checked = checkTrialResult({ ...result, files: "bm90IGd6aXA=" }, job);
    expect(checked).toMatchObject({ ok: false });
  });
});

describe("results of one trial attempt", () => {
  it("are taken once: a second result of the same attempt is ignored, another attempt's is not", () => {
    const accepted = new AcceptedResults();
    expect(accepted.claim(3, 1)).toBe(true);
    expect(accepted.claim(3, 1)).toBe(false);
    expect(accepted.claim(3, 2)).toBe(true);
    expect(accepted.claim(4, 1)).toBe(true);
  });
});

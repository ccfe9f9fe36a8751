// Keeping every attempt of a retried trial, whatever moment a run was killed at: the folder a
// resumed trial starts from (prepareTrialFolder) and the archiving of an attempt.
import { mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { TrialMetrics } from "../../src/compare/index.js";
import { archiveAttempt, prepareTrialFolder } from "../../src/compare/run/retry.js";
import { passedTrialMetrics } from "../support/metrics.js";

const FILES = ["patch.diff", "stderr.txt", "trace.jsonl"];

/** An attempt that ended in an infrastructure error, as the runner records it. */
function record(overrides: Partial<TrialMetrics> = {}): TrialMetrics {
  return passedTrialMetrics({
    outcome: "infrastructure_error",
    infraReason: "network_unreachable",
    explanation: "network down",
    receiptStatus: "infra_error",
    score: null,
    gradePassed: null,
    durationMs: 5,
    agentWallTimeMs: 4,
    costUsd: 0.02,
    ...overrides,
  });
}

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

/** A trial folder whose top holds a finished attempt (`tag` in every file). */
async function trialFolder(tag: string, metrics: TrialMetrics = record()): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "hl-retry-folder-"));
  dirs.push(dir);
  await writeTop(dir, tag, metrics);
  return dir;
}

async function writeTop(dir: string, tag: string, metrics: TrialMetrics) {
  for (const name of FILES) await writeFile(join(dir, name), `${tag} ${name}`);
  await writeFile(join(dir, "metrics.json"), JSON.stringify(metrics));
}

const list = async (dir: string) => (await readdir(dir)).sort();

describe("archiveAttempt", () => {
  it("moves the whole attempt into attempts/<n> and returns its record", async () => {
    const dir = await trialFolder("first");
    const attempt = await archiveAttempt(dir, 1, record());
    expect(attempt).toEqual({
      attempt: 1,
      infraReason: "network_unreachable",
      explanation: "network down",
      dir: "attempts/1",
      durationMs: 5,
      costUsd: 0.02,
    });
    expect(await list(dir)).toEqual(["attempts"]);
    expect(await list(join(dir, "attempts", "1"))).toEqual([...FILES, "metrics.json"].sort());
    expect(await readFile(join(dir, "attempts", "1", "patch.diff"), "utf8")).toBe(
      "first patch.diff",
    );
  });

  it("never overwrites an attempt folder that is already there", async () => {
    const dir = await trialFolder("second");
    await mkdir(join(dir, "attempts", "1"), { recursive: true });
    await writeFile(join(dir, "attempts", "1", "metrics.json"), "damaged");
    const attempt = await archiveAttempt(dir, 1, record());
    expect(attempt.attempt).toBe(2);
    expect(await readFile(join(dir, "attempts", "1", "metrics.json"), "utf8")).toBe("damaged");
  });
});

describe("prepareTrialFolder", () => {
  it("keeps earlier attempts, archives a finished retryable record left at the top, and clears the rest", async () => {
    const dir = await trialFolder("first");
    await archiveAttempt(dir, 1, record());
    await writeTop(dir, "second", record({ explanation: "still down" }));
    const attempts = await prepareTrialFolder(dir);
    expect(attempts.map((a) => [a.attempt, a.explanation])).toEqual([
      [1, "network down"],
      [2, "still down"],
    ]);
    expect(await list(dir)).toEqual(["attempts"]);
    expect(await readFile(join(dir, "attempts", "2", "trace.jsonl"), "utf8")).toBe(
      "second trace.jsonl",
    );
  });

  it("removes an unfinished attempt's files (no record at the top) and keeps the earlier ones", async () => {
    const dir = await trialFolder("first");
    await archiveAttempt(dir, 1, record());
    for (const name of FILES) await writeFile(join(dir, name), "half");
    const attempts = await prepareTrialFolder(dir);
    expect(attempts.map((a) => a.attempt)).toEqual([1]);
    expect(await list(dir)).toEqual(["attempts"]);
  });

  it("completes an attempt a killed run was archiving after its record moved", async () => {
    const dir = await trialFolder("first");
    // Killed mid-archive: two files and the record staged, the third still at the top.
    const staging = join(dir, "attempts", ".1.partial");
    await mkdir(staging, { recursive: true });
    await rename(join(dir, "patch.diff"), join(staging, "patch.diff"));
    await rename(join(dir, "stderr.txt"), join(staging, "stderr.txt"));
    await rename(join(dir, "metrics.json"), join(staging, "metrics.json"));
    const attempts = await prepareTrialFolder(dir);
    expect(attempts.map((a) => a.attempt)).toEqual([1]);
    expect(await list(join(dir, "attempts"))).toEqual(["1"]);
    expect(await list(join(dir, "attempts", "1"))).toEqual([...FILES, "metrics.json"].sort());
    expect(await readFile(join(dir, "attempts", "1", "trace.jsonl"), "utf8")).toBe(
      "first trace.jsonl",
    );
  });

  it("puts back an attempt a killed run had begun to archive before its record moved, then archives it whole", async () => {
    const dir = await trialFolder("first");
    const staging = join(dir, "attempts", ".1.partial");
    await mkdir(staging, { recursive: true });
    await rename(join(dir, "patch.diff"), join(staging, "patch.diff"));
    const attempts = await prepareTrialFolder(dir);
    expect(attempts.map((a) => a.attempt)).toEqual([1]);
    expect(await list(join(dir, "attempts", "1"))).toEqual([...FILES, "metrics.json"].sort());
    expect(await list(dir)).toEqual(["attempts"]);
  });

  it("leaves an attempt folder whose record cannot be read, uncounted, and numbers past it", async () => {
    const dir = await trialFolder("first");
    await mkdir(join(dir, "attempts", "1"), { recursive: true });
    await writeFile(join(dir, "attempts", "1", "metrics.json"), "{not json");
    const attempts = await prepareTrialFolder(dir);
    expect(attempts.map((a) => a.attempt)).toEqual([2]);
    expect(await readFile(join(dir, "attempts", "1", "metrics.json"), "utf8")).toBe("{not json");
  });

  it("does not archive a finished record that is not a retryable infrastructure error", async () => {
    const dir = await trialFolder("done", record({ outcome: "failed", infraReason: null }));
    expect(await prepareTrialFolder(dir)).toEqual([]);
    expect(await readdir(dir)).toEqual([]);
  });
});

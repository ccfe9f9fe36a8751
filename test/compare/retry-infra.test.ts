// --retry-infra: a trial that ends in a retryable infrastructure error runs again, every attempt's
// files are kept under attempts/<n>/, and the verdict and reports say how many were retried.
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  type RunProgress,
  runManifestSchema,
  trialMetricsSchema,
  verdictDocumentSchema,
} from "../../src/compare/index.js";
import {
  type Executor,
  type InfraReason,
  type RuntimeReceipt,
  ScriptedExecutor,
} from "../../src/exec/index.js";
import { runHarness } from "../support/cli.js";
import {
  makeExperiment,
  readJson,
  runManifest,
  syntheticManifest,
  type TempExperiment,
  TRIAL_FILES,
} from "../support/experiment.js";

const experiments: TempExperiment[] = [];
async function experiment(): Promise<TempExperiment> {
  const exp = await makeExperiment({
    manifest: syntheticManifest({ trials: { count: 2, seed: 3 }, concurrency: 2 }),
  });
  experiments.push(exp);
  return exp;
}
afterAll(async () => {
  await Promise.all(experiments.map((e) => e.cleanup()));
});

/**
 * A scripted executor whose first `failures(variant, trial)` calls for a trial end in an
 * infrastructure error with `reason`, as a flaky network or a crashing SDK would.
 */
function flakyExecutor(
  failures: (variant: string, trial: number) => number,
  reason: InfraReason | "throw",
): Executor & { calls: Map<string, number> } {
  const inner = new ScriptedExecutor();
  const calls = new Map<string, number>();
  return {
    host: "scripted",
    calls,
    async run(input): Promise<RuntimeReceipt> {
      const key = `${input.variant}/${input.trialIndex}`;
      const call = (calls.get(key) ?? 0) + 1;
      calls.set(key, call);
      if (call <= failures(input.variant, input.trialIndex)) {
        if (reason === "throw") throw new Error(`SDK transport closed (attempt ${call})`);
        const receipt = await inner.run(input);
        return {
          ...receipt,
          status: "infra_error",
          infraReason: reason,
          error: `attempt ${call}: ${reason}`,
          costUsd: 0.01,
        };
      }
      return inner.run(input);
    },
  };
}

describe("--retry-infra", () => {
  it("runs a trial again after a retryable infrastructure error and keeps every attempt's files", async () => {
    const exp = await experiment();
    // fixer #1 fails twice, baseline #2 once; the others pass or fail on their own merits.
    const executor = flakyExecutor(
      (variant, trial) =>
        variant === "fixer" && trial === 1 ? 2 : variant === "baseline" && trial === 2 ? 1 : 0,
      "network_unreachable",
    );
    const progress: RunProgress[] = [];
    const { verdict } = await runManifest(exp.manifestPath, {
      outDir: exp.outDir,
      tempParent: exp.trialsDir,
      executorFor: () => executor,
      retryInfra: 3,
      retryBackoffMs: 1,
      onProgress: (p) => progress.push(p),
    });

    expect(executor.calls.get("fixer/1")).toBe(3);
    expect(executor.calls.get("baseline/2")).toBe(2);
    expect(verdict.trials.every((t) => t.outcome !== "infrastructure_error")).toBe(true);
    expect(verdict.infraRetries).toEqual({
      limit: 3,
      trialsRetried: 2,
      extraAttempts: 3,
      recovered: 2,
      extraCostUsd: 0.03,
    });

    const fixer = verdict.trials.find((t) => t.variant === "fixer" && t.trial === 1)!;
    expect(fixer.outcome).toBe("passed");
    expect(fixer.retriedAttempts.map((a) => [a.attempt, a.infraReason, a.dir])).toEqual([
      [1, "network_unreachable", "attempts/1"],
      [2, "network_unreachable", "attempts/2"],
    ]);
    const dir = join(exp.outDir, fixer.artifactDir);
    // The last attempt's files are the trial's own; each earlier attempt keeps a full set.
    expect((await readdir(dir)).sort()).toEqual([...TRIAL_FILES, "attempts"].sort());
    for (const n of [1, 2]) {
      expect((await readdir(join(dir, "attempts", String(n)))).sort()).toEqual(
        [...TRIAL_FILES].sort(),
      );
      const old = trialMetricsSchema.parse(
        await readJson(dir, join("attempts", String(n), "metrics.json")),
      );
      expect(old.outcome).toBe("infrastructure_error");
      expect(old.infraReason).toBe("network_unreachable");
      expect(await readFile(join(dir, "attempts", String(n), "stderr.txt"), "utf8")).toContain(
        `attempt ${n}: network_unreachable`,
      );
    }
    const final = trialMetricsSchema.parse(await readJson(dir, "metrics.json"));
    expect(final.retriedAttempts).toHaveLength(2);

    const manifest = runManifestSchema.parse(await readJson(exp.outDir, "manifest.json"));
    expect(manifest.effective.retryInfra).toBe(3);
    expect(progress.at(-1)?.retried).toBe(2);
    const md = await readFile(join(exp.outDir, "verdict.md"), "utf8");
    expect(md).toMatch(/retried/i);
  });

  it("gives up after the limit: the last attempt's infrastructure error stands, all attempts kept", async () => {
    const exp = await experiment();
    const executor = flakyExecutor(
      (variant, trial) => (variant === "fixer" && trial === 2 ? 9 : 0),
      "throw",
    );
    const { verdict } = await runManifest(exp.manifestPath, {
      outDir: exp.outDir,
      tempParent: exp.trialsDir,
      executorFor: () => executor,
      retryInfra: 2,
      retryBackoffMs: 1,
    });
    expect(executor.calls.get("fixer/2")).toBe(3);
    const trial = verdict.trials.find((t) => t.variant === "fixer" && t.trial === 2)!;
    expect(trial.outcome).toBe("infrastructure_error");
    expect(trial.infraReason).toBe("executor_threw");
    expect(trial.explanation).toContain("attempt 3");
    expect(trial.retriedAttempts.map((a) => a.explanation)).toEqual([
      expect.stringContaining("attempt 1"),
      expect.stringContaining("attempt 2"),
    ]);
    expect(verdict.infraRetries).toMatchObject({
      trialsRetried: 1,
      extraAttempts: 2,
      recovered: 0,
    });
  });

  it("does not retry errors that fail the same way every time (a missing credential)", async () => {
    const exp = await experiment();
    const executor = flakyExecutor((variant) => (variant === "fixer" ? 9 : 0), "auth_missing");
    const { verdict } = await runManifest(exp.manifestPath, {
      outDir: exp.outDir,
      tempParent: exp.trialsDir,
      executorFor: () => executor,
      retryInfra: 3,
      retryBackoffMs: 1,
    });
    expect(executor.calls.get("fixer/1")).toBe(1);
    expect(verdict.infraRetries).toMatchObject({ limit: 3, trialsRetried: 0, extraAttempts: 0 });
    expect(verdict.trials.filter((t) => t.variant === "fixer").map((t) => t.infraReason)).toEqual([
      "auth_missing",
      "auth_missing",
    ]);
  });

  it("is off by default: one attempt per trial", async () => {
    const exp = await experiment();
    const executor = flakyExecutor(() => 1, "rate_limited");
    const { verdict } = await runManifest(exp.manifestPath, {
      outDir: exp.outDir,
      tempParent: exp.trialsDir,
      executorFor: () => executor,
    });
    expect([...executor.calls.values()].every((n) => n === 1)).toBe(true);
    expect(verdict.infraRetries).toEqual({
      limit: 0,
      trialsRetried: 0,
      extraAttempts: 0,
      recovered: 0,
      extraCostUsd: null,
    });
    expect(verdict.trials.every((t) => t.infraReason === "rate_limited")).toBe(true);
  });

  it("does not retry a grader that broke: every attempt would pay for an agent run and break again", async () => {
    const exp = await experiment();
    await exp.writeManifest(
      syntheticManifest({
        trials: { count: 2, seed: 3 },
        tasks: [
          {
            id: "fix-value",
            fixture: "./fixture",
            prompt: "./prompt.md",
            expectedFiles: ["src/value.txt"],
            graders: [{ kind: "command", id: "check", argv: ["no-such-grader-program"] }],
          },
        ],
      }),
    );
    const executor = flakyExecutor(() => 0, "network_unreachable");
    const { verdict } = await runManifest(exp.manifestPath, {
      outDir: exp.outDir,
      tempParent: exp.trialsDir,
      executorFor: () => executor,
      retryInfra: 3,
      retryBackoffMs: 1,
    });
    expect(verdict.trials.every((t) => t.infraReason === "grader_failed")).toBe(true);
    expect([...executor.calls.values()]).toEqual([1, 1, 1, 1]);
    expect(verdict.infraRetries.trialsRetried).toBe(0);
  });

  it("stopped during the wait before a retry: no new attempt starts, the attempt made is kept, and --resume continues from it", async () => {
    const exp = await experiment();
    const controller = new AbortController();
    const first = flakyExecutor(() => 1, "rate_limited");
    const running = runManifest(exp.manifestPath, {
      outDir: exp.outDir,
      tempParent: exp.trialsDir,
      executorFor: () => first,
      concurrency: 1,
      retryInfra: 2,
      retryBackoffMs: 60_000,
      signal: controller.signal,
    });
    // Stop once the first attempt is on record, i.e. during the minute's wait before its retry.
    await waitForFile(exp.outDir, "metrics.json", (path) => path.includes("/attempts/1/"));
    controller.abort(new Error("Ctrl-C"));
    const interrupted = await running;
    expect(interrupted.verdict.interrupted).toBe(true);
    expect([...first.calls.values()].every((n) => n === 1)).toBe(true);
    // A trial whose attempt ended before the stop waits for its retry with that attempt kept;
    // one the stop cut short has no record at all. Neither is finished.
    const waiting: string[] = [];
    for (const key of first.calls.keys()) {
      const [variant, trial] = key.split("/");
      const dir = join(exp.outDir, variant!, "fix-value", `trial-00${trial}`);
      const names = await readdir(dir);
      expect(names).not.toContain("metrics.json");
      if (!names.includes("attempts")) continue;
      waiting.push(key);
      expect(names).toEqual(["attempts"]);
      expect((await readdir(join(dir, "attempts", "1"))).sort()).toEqual([...TRIAL_FILES].sort());
    }
    expect(waiting.length).toBeGreaterThan(0);

    const healthy = flakyExecutor(() => 0, "rate_limited");
    const { verdict } = await runManifest(exp.manifestPath, {
      outDir: exp.outDir,
      tempParent: exp.trialsDir,
      executorFor: () => healthy,
      retryInfra: 2,
      retryBackoffMs: 1,
      resume: true,
    });
    expect(verdict.interrupted).toBe(false);
    for (const key of waiting) {
      const [variant, trial] = key.split("/");
      const record = verdict.trials.find(
        (t) => t.variant === variant && String(t.trial) === trial,
      )!;
      expect(record.outcome).not.toBe("infrastructure_error");
      expect(record.retriedAttempts.map((a) => [a.attempt, a.infraReason, a.dir])).toEqual([
        [1, "rate_limited", "attempts/1"],
      ]);
    }
    expect(verdict.infraRetries.trialsRetried).toBe(waiting.length);
  });

  it("a resume with --retry-infra gives the earlier run's retryable infrastructure errors their next attempt, keeping the first", async () => {
    const exp = await experiment();
    const broken = flakyExecutor((variant) => (variant === "fixer" ? 1 : 0), "network_unreachable");
    const first = await runManifest(exp.manifestPath, {
      outDir: exp.outDir,
      tempParent: exp.trialsDir,
      executorFor: () => broken,
    });
    expect(first.verdict.trials.filter((t) => t.outcome === "infrastructure_error")).toHaveLength(
      2,
    );

    const healthy = flakyExecutor(() => 0, "network_unreachable");
    // While the resume runs trials again, the earlier verdict is gone: the folder must not look
    // like a finished run to a regrade, a report or a reader.
    const verdictSeen: boolean[] = [];
    const watching: Executor = {
      host: "scripted",
      async run(input) {
        verdictSeen.push(existsSync(join(exp.outDir, "verdict.json")));
        return healthy.run(input);
      },
    };
    const { verdict } = await runManifest(exp.manifestPath, {
      outDir: exp.outDir,
      tempParent: exp.trialsDir,
      executorFor: () => watching,
      retryInfra: 1,
      retryBackoffMs: 1,
      resume: true,
    });
    // Only the two infrastructure errors ran again; the finished baseline trials were kept.
    expect([...healthy.calls.keys()].sort()).toEqual(["fixer/1", "fixer/2"]);
    expect(verdictSeen).toEqual([false, false]);
    expect(verdict.resumedTrials).toBe(2);
    const fixer = verdict.trials.filter((t) => t.variant === "fixer");
    expect(fixer.map((t) => t.outcome)).toEqual(["passed", "passed"]);
    for (const t of fixer) {
      expect(t.retriedAttempts.map((a) => a.infraReason)).toEqual(["network_unreachable"]);
      const old = trialMetricsSchema.parse(
        await readJson(join(exp.outDir, t.artifactDir), "attempts/1/metrics.json"),
      );
      expect(old.infraReason).toBe("network_unreachable");
    }
    expect(verdict.infraRetries).toMatchObject({ limit: 1, trialsRetried: 2, recovered: 2 });
  });

  it("verdicts written before retries existed still parse", () => {
    const legacy = JSON.parse(
      JSON.stringify({ ...verdictFixture(), infraRetries: undefined }),
    ) as Record<string, unknown>;
    const parsed = verdictDocumentSchema.parse(legacy);
    expect(parsed.infraRetries.limit).toBe(0);
    expect(parsed.trials[0]?.retriedAttempts).toEqual([]);
  });
});

describe("harness compare run --retry-infra", () => {
  it("accepts 0 to 10 and refuses anything else with exit 2", async () => {
    const exp = await experiment();
    for (const bad of ["-1", "11", "two", "1.5"]) {
      const run = await runHarness([
        "compare",
        "run",
        exp.manifestPath,
        "--out",
        exp.outDir,
        "--retry-infra",
        bad,
      ]);
      expect(run.exitCode, bad).toBe(2);
      expect(run.stderr).toContain("--retry-infra must be a whole number from 0 to 10");
    }
    const run = await runHarness([
      "compare",
      "run",
      exp.manifestPath,
      "--out",
      exp.outDir,
      "--retry-infra",
      "2",
      "--json",
    ]);
    expect(run.exitCode, run.stderr).toBe(0);
    const verdict = verdictDocumentSchema.parse(JSON.parse(run.stdout));
    expect(verdict.infraRetries.limit).toBe(2);
  });
});

/** Resolves once a file called `name` whose path passes `where` exists below `root` (fails after 30 s). */
async function waitForFile(
  root: string,
  name: string,
  where: (path: string) => boolean,
): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const found = (await readdir(root, { recursive: true }).catch(() => [] as string[])).some(
      (path) => path.endsWith(name) && where(`/${path}`),
    );
    if (found) return;
    if (Date.now() > deadline) throw new Error(`no ${name} appeared under ${root}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A minimal verdict document as an older harnesslab wrote it (no retry fields). */
function verdictFixture(): Record<string, unknown> {
  const sha = `sha256:${"0".repeat(64)}`;
  return {
    schemaVersion: "harnesslab.verdict.v1",
    status: "need_more_work",
    reason: "r",
    host: "scripted",
    baseline: "a",
    variants: [],
    tasks: ["t"],
    trialsPerCell: 1,
    fixturesUnchanged: true,
    evidence: { manifestHash: sha, harnessHash: sha, fixtureHashes: { t: sha } },
    statistics: null,
    trials: [
      {
        task: "t",
        variant: "a",
        trial: 1,
        seq: 1,
        outcome: "passed",
        infraReason: null,
        explanation: "",
        receiptStatus: "completed",
        score: 100,
        gradePassed: true,
        changedFiles: [],
        patchBytes: 0,
        patchRedacted: false,
        durationMs: 1,
        agentWallTimeMs: 1,
        tokens: null,
        costUsd: null,
        credits: null,
        turns: null,
        toolCalls: null,
        permissionDenials: 0,
        artifactDir: "a/t/trial-001",
      },
    ],
    startedAt: "x",
    finishedAt: "y",
    regradeOf: null,
  };
}

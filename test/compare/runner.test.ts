// runExperiment's own behaviour: how many trials run at once, what progress it reports, and how
// agent endings (timeout, throw, bad module) are classified: a timeout is the agent's failure; a
// scripted agent that throws or does not load is the experiment's error, never the setup's.
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ExperimentInputError, type RunProgress } from "../../src/compare/index.js";
import { estimateRemainingMs } from "../../src/compare/run/runner.js";
import { type Executor, ScriptedExecutor } from "../../src/exec/index.js";
import {
  makeExperiment,
  runManifest,
  syntheticManifest,
  type TempExperiment,
} from "../support/experiment.js";

let exp: TempExperiment;
beforeAll(async () => {
  exp = await makeExperiment({
    agents: {
      "slow.mjs": `export default async function slow({ tools }) {
  await new Promise(() => {});
}
`,
      "thrower.mjs": `export default async function thrower({ tools }) {
  await tools.write("src/value.txt", "fixed\\n");
  throw new Error("model returned malformed tool input");
}
`,
      "broken-syntax.mjs": "export default async function ( {\n",
    },
  });
});
afterAll(() => exp.cleanup());

/**
 * Counts how many runs are in flight at once. The first `lanes` runs wait (up to 5 s) until all
 * of them have started, so lanes that can overlap do, however slow the machine is.
 */
function gaugedExecutor(gauge: { now: number; max: number }, lanes: number): Executor {
  const inner = new ScriptedExecutor();
  let started = 0;
  return {
    host: "scripted",
    async run(input) {
      started += 1;
      gauge.now += 1;
      gauge.max = Math.max(gauge.max, gauge.now);
      try {
        const deadline = Date.now() + 5000;
        while (started < lanes && Date.now() < deadline)
          await new Promise((resolve) => setTimeout(resolve, 10));
        return await inner.run(input);
      } finally {
        gauge.now -= 1;
      }
    },
  };
}

describe("runExperiment", () => {
  it("runs at most `concurrency` trials at once, and really runs them in parallel", async () => {
    for (const concurrency of [1, 2]) {
      const gauge = { now: 0, max: 0 };
      await runManifest(exp.manifestPath, {
        outDir: exp.freshOut(`concurrency-${concurrency}`),
        tempParent: exp.trialsDir,
        concurrency,
        executorFor: () => gaugedExecutor(gauge, concurrency),
      });
      expect(gauge.max, `concurrency ${concurrency}`).toBe(concurrency);
    }
  });

  it("when its own code fails mid-run, starts no new trial, lets the running ones finish, then throws", async () => {
    const started: string[] = [];
    const finished: string[] = [];
    const inner = new ScriptedExecutor();
    const executor: Executor = {
      host: "scripted",
      async run(input) {
        started.push(`${input.variant}/${input.trialIndex}`);
        const receipt = await inner.run(input);
        finished.push(`${input.variant}/${input.trialIndex}`);
        return receipt;
      },
    };
    const outDir = exp.freshOut("progress-throws");
    await expect(
      runManifest(exp.manifestPath, {
        outDir,
        tempParent: exp.trialsDir,
        concurrency: 2,
        executorFor: () => executor,
        onProgress: (p) => {
          if (p.done === 1) throw new Error("progress display broke");
        },
      }),
    ).rejects.toThrow("progress display broke");
    // 4 trials planned; the failure after the first stops the queue: the one beside it finishes,
    // nothing else starts.
    expect(started.length).toBeLessThan(4);
    // Which of the two running trials ends first is the scheduler's business: compare as sets.
    expect([...finished].sort()).toEqual([...started].sort());
    expect(await readdir(exp.trialsDir)).toEqual([]);
  });

  it("reports progress after every trial with counts, elapsed time and an estimate", async () => {
    const progress: RunProgress[] = [];
    await runManifest(exp.manifestPath, {
      outDir: exp.freshOut("progress"),
      tempParent: exp.trialsDir,
      onProgress: (p) => progress.push(p),
    });
    expect(progress.map((p) => p.done)).toEqual([0, 1, 2, 3, 4]);
    expect(progress[0]).toMatchObject({ total: 4, etaMs: null, reused: 0 });
    const last = progress.at(-1)!;
    expect(last).toMatchObject({ done: 4, passed: 2, failed: 2, infraErrors: 0, etaMs: 0 });
    for (const p of progress.slice(1)) {
      expect(p.last?.seq).toBeGreaterThan(0);
      expect(p.etaMs).not.toBeNull();
      expect(p.passed + p.failed + p.infraErrors).toBe(p.done);
    }
    const elapsed = progress.map((p) => p.elapsedMs);
    expect([...elapsed].sort((a, b) => a - b)).toEqual(elapsed);
  });

  it("fails an agent that outlives its timeout, and leaves nothing of its trial", async () => {
    const manifest = await exp.writeManifest(
      syntheticManifest({
        variants: [
          { id: "baseline", composition: "plain", agent: "nop" },
          { id: "slow", composition: "careful", agent: "./agents/slow.mjs" },
        ],
        runtime: { host: "scripted", timeoutMs: 1000, validationCommands: [] },
        trials: { count: 1, seed: 1 },
      }),
      "slow.json",
    );
    const { verdict } = await runManifest(manifest, {
      outDir: exp.freshOut("slow-out"),
      tempParent: exp.trialsDir,
    });
    const slow = verdict.trials.find((t) => t.variant === "slow")!;
    expect(slow).toMatchObject({ outcome: "failed", receiptStatus: "timeout", changedFiles: [] });
    expect(slow.explanation).toContain("ran out of time");
    expect(await readdir(exp.trialsDir)).toEqual([]);
  });

  it("makes a scripted agent that throws the experiment's error, saying where it threw; a variant that never ran gives no verdict", async () => {
    const manifest = await exp.writeManifest(
      syntheticManifest({
        variants: [
          { id: "baseline", composition: "plain", agent: "nop" },
          { id: "thrower", composition: "careful", agent: "./agents/thrower.mjs" },
        ],
        trials: { count: 1, seed: 1 },
      }),
      "agent-errors.json",
    );
    const out = exp.freshOut("agent-errors-out");
    const { verdict } = await runManifest(manifest, { outDir: out, tempParent: exp.trialsDir });
    const thrower = verdict.trials.find((t) => t.variant === "thrower")!;
    // Its write happened, but a crashed stand-in says nothing about the setup it stands in for.
    expect(thrower).toMatchObject({
      outcome: "infrastructure_error",
      infraReason: "scripted_agent_failed",
      receiptStatus: "infra_error",
      gradePassed: null,
    });
    expect(thrower.explanation).toBe(
      "scripted_agent_failed: the scripted agent threw: model returned malformed tool input (at thrower.mjs:3:9)",
    );
    const stderr = await readFile(join(out, thrower.artifactDir, "stderr.txt"), "utf8");
    expect(stderr).toContain(
      "executor: the scripted agent threw: model returned malformed tool input (at thrower.mjs:3:9)",
    );
    expect(verdict.status).toBe("infrastructure_error");
  });

  it("stops before any trial when an agent module does not load, naming the variant, the file and the line", async () => {
    // Counted as the agent's failure, a broken module would fail one variant's every trial and
    // hand the other an `accept`.
    const manifest = await exp.writeManifest(
      syntheticManifest({
        variants: [
          { id: "baseline", composition: "plain", agent: "nop" },
          { id: "syntax", composition: "extra", agent: "./agents/broken-syntax.mjs" },
        ],
        trials: { count: 1, seed: 1 },
      }),
      "agent-syntax.json",
    );
    const out = exp.freshOut("agent-syntax-out");
    const calls: string[] = [];
    const refused = await runManifest(manifest, {
      outDir: out,
      tempParent: exp.trialsDir,
      executorFor: () => ({
        host: "scripted",
        run: () => {
          calls.push("ran");
          throw new Error("unreachable");
        },
      }),
    }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ExperimentInputError);
    expect((refused as ExperimentInputError).problems).toEqual([
      {
        path: "variants[1].agent",
        message: expect.stringMatching(/^agent module broken-syntax\.mjs\S* failed to load: /),
      },
    ]);
    expect(calls).toEqual([]);
  });

  it("refuses a non-empty --out before running anything", async () => {
    const calls: string[] = [];
    await expect(
      runManifest(exp.manifestPath, {
        outDir: exp.dir,
        executorFor: () => ({
          host: "scripted",
          run: () => {
            calls.push("ran");
            throw new Error("unreachable");
          },
        }),
      }),
    ).rejects.toThrow(ExperimentInputError);
    expect(calls).toEqual([]);
  });
});

describe("the progress line's ETA", () => {
  it("is the trials' mean duration over the trials running at once, for the remaining ones", () => {
    // 4 trials of 1 s ran, 2 at a time, in 2 s; 6 remain: 3 more seconds.
    expect(
      estimateRemainingMs({ elapsedMs: 2000, ran: 4, ranMs: 4000, remaining: 6, concurrency: 2 }),
    ).toBe(3000);
    // The last trial alone does not run faster for a higher concurrency.
    expect(
      estimateRemainingMs({ elapsedMs: 900, ran: 9, ranMs: 9000, remaining: 1, concurrency: 4 }),
    ).toBe(1000);
  });

  it("follows the run's own pace where workers decide how many run at once (a queue)", () => {
    // 3 workers: 6 trials of 1 s each done in 2 s; 9 remain: 3 s more, whatever was queued.
    expect(
      estimateRemainingMs({
        elapsedMs: 2000,
        ran: 6,
        ranMs: 6000,
        remaining: 9,
        concurrency: undefined,
      }),
    ).toBe(3000);
  });

  it("is 0 once nothing remains, or before anything ran", () => {
    expect(
      estimateRemainingMs({ elapsedMs: 5, ran: 1, ranMs: 5, remaining: 0, concurrency: 2 }),
    ).toBe(0);
    expect(
      estimateRemainingMs({ elapsedMs: 5, ran: 0, ranMs: 0, remaining: 3, concurrency: 2 }),
    ).toBe(0);
  });
});

// `compare run --queue` and `harness worker` against a real redis-server: workers in processes of
// their own, killed and started again; a coordinator killed and resumed, stopped with Ctrl-C, and
// left without Redis; a worker of another version; a bundle gone from Redis. Agents wait at gates
// the test opens, so what is running when something is killed never depends on timing.
import type { ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { Queue, QueueEvents, Worker } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { TrialMetrics, VerdictDocument } from "../../src/artifacts/index.js";
import {
  defaultStateDir,
  loadRunKey,
  verifyRecord,
} from "../../src/compare/evidence/record-seal.js";
import { queueTrials } from "../../src/compare/queue/coordinator.js";
import {
  HARNESSLAB_VERSION,
  KEY_PREFIX,
  QUEUE_PROTOCOL,
  TRIALS_QUEUE,
} from "../../src/compare/queue/protocol.js";
import { type SpawnedHarness, spawnHarness } from "../support/cli.js";
import {
  makeExperiment,
  readJson,
  runManifest,
  syntheticManifest,
  type TempExperiment,
} from "../support/experiment.js";
import { type RedisServer, redisSkipReason, startRedis } from "../support/redis.js";

const SECRET = "sk-ant-queue-secret-4f1c9e";

// Notes its start in the gate folder, then waits there until the test opens its gate (or all).
const GATED_AGENT = (fixes: boolean) => `import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
export default async function gated({ tools, trial, signal }) {
  const gate = process.env.HL_TEST_GATE;
  const name = \`\${trial.variant}-\${trial.index}\`;
  if (gate) {
    writeFileSync(join(gate, \`started-\${name}-\${process.pid}\`), "");
    while (!signal.aborted && !existsSync(join(gate, "open-all")) && !existsSync(join(gate, \`open-\${name}\`)))
      await sleep(10);
  }
  ${fixes ? 'const write = await tools.write("src/value.txt", "fixed\\n"); if (!write.ok) throw new Error("refused");' : ""}
  return "${fixes ? "fixed src/value.txt" : "nothing to do"}";
}
`;

const skip = redisSkipReason();
if (skip !== undefined) console.log(skip);

let redis: RedisServer;
let exp: TempExperiment;
let reference: VerdictDocument;
let referenceOut: string;
const children = new Set<ChildProcess>();
let step = 0;

function cli(args: string[], env: Record<string, string> = {}): SpawnedHarness {
  const spawned = spawnHarness(args, env);
  children.add(spawned.child);
  void spawned.exited.then(() => children.delete(spawned.child));
  return spawned;
}

/** A fresh gate folder; agents started with it wait until the test opens them. */
async function gate(): Promise<string> {
  step += 1;
  const dir = join(exp.base, `gate-${step}`);
  await mkdir(dir);
  return dir;
}

async function worker(
  name: string,
  gateDir: string,
  extra: string[] = [],
): Promise<SpawnedHarness> {
  const spawned = cli(
    ["worker", "--queue", redis.url, "--name", name, "--lock-ms", "1000", ...extra],
    { HL_TEST_GATE: gateDir, TMPDIR: exp.trialsDir },
  );
  await spawned.waitFor(`worker ${name}: taking trials`);
  return spawned;
}

function coordinator(outDir: string, extra: string[] = []): SpawnedHarness {
  return cli(
    ["compare", "run", exp.manifestPath, "--out", outDir, "--queue", redis.url, ...extra],
    { ANTHROPIC_API_KEY: SECRET },
  );
}

async function until(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 20));
}

async function started(gateDir: string): Promise<string[]> {
  return (await readdir(gateDir)).filter((name) => name.startsWith("started-"));
}

/**
 * Finishes the run in `out` as a user would: a worker with an open gate, the coordinator again
 * with `resumeArgs`; then its verdict must be the local run's, and the worker stops cleanly.
 */
async function finishWithNewWorker(out: string, name: string, resumeArgs: string[]) {
  const gateDir = await gate();
  await writeFile(join(gateDir, "open-all"), "");
  const helper = await worker(name, gateDir);
  expect(await coordinator(out, resumeArgs).exited).toBe(exitFor(reference));
  expect(outcomes((await readJson(out, "verdict.json")) as VerdictDocument)).toEqual(
    outcomes(reference),
  );
  helper.child.kill("SIGTERM");
  expect(await helper.exited).toBe(0);
}

function queueOf(connection: Redis): Queue {
  return new Queue(TRIALS_QUEUE, { connection, prefix: KEY_PREFIX });
}

/** The trials queue and its events on connections of their own, all closed after `use`. */
async function withQueueEvents<T>(
  use: (queue: Queue, events: QueueEvents) => Promise<T>,
): Promise<T> {
  const connection = new Redis(redis.url);
  const queue = queueOf(connection);
  const eventsConnection = new Redis(redis.url, { maxRetriesPerRequest: null });
  const events = new QueueEvents(TRIALS_QUEUE, {
    connection: eventsConnection,
    prefix: KEY_PREFIX,
  });
  try {
    await events.waitUntilReady();
    return await use(queue, events);
  } finally {
    await queue.obliterate({ force: true });
    await events.close();
    await queue.close();
    eventsConnection.disconnect();
    connection.disconnect();
  }
}

/** Every trial of a verdict, timings and seals aside. */
function outcomes(verdict: VerdictDocument) {
  return verdict.trials
    .map(
      ({ seq, task, variant, trial, outcome, score, explanation, changedFiles, gradePassed }) => ({
        seq,
        task,
        variant,
        trial,
        outcome,
        score,
        explanation,
        changedFiles,
        gradePassed,
      }),
    )
    .sort((a, b) => a.seq - b.seq);
}

describe.skipIf(skip !== undefined)("compare run --queue with harness worker", () => {
  beforeAll(async () => {
    redis = await startRedis();
    exp = await makeExperiment({
      agents: { "gated-nop.mjs": GATED_AGENT(false), "gated-fixer.mjs": GATED_AGENT(true) },
    });
    await exp.writeManifest(
      syntheticManifest({
        variants: [
          { id: "baseline", composition: "plain", agent: "./agents/gated-nop.mjs" },
          { id: "fixer", composition: "careful", agent: "./agents/gated-fixer.mjs" },
        ],
      }),
    );
    referenceOut = exp.freshOut("reference");
    ({ verdict: reference } = await runManifest(exp.manifestPath, {
      outDir: referenceOut,
      tempParent: exp.trialsDir,
    }));
  }, 120_000);

  afterAll(async () => {
    for (const child of children) child.kill("SIGKILL");
    await redis?.stop();
    await exp?.cleanup();
  });

  // Each test starts from an empty queue: what one leaves behind (it failed, or it stops workers
  // mid-job on purpose) is never another's input.
  afterEach(async () => {
    for (const child of children) child.kill("SIGKILL");
    if (!redis?.running()) return;
    const connection = new Redis(redis.url);
    const queue = queueOf(connection);
    try {
      await queue.obliterate({ force: true });
      for (const key of await connection.keys(`${KEY_PREFIX}:bundle:*`)) await connection.del(key);
    } finally {
      await queue.close();
      connection.disconnect();
    }
  });

  it("two workers in their own processes give the records and verdict a local run gives, and no secret of the coordinator reaches Redis", async () => {
    const gateDir = await gate();
    await writeFile(join(gateDir, "open-all"), "");
    const [one, two] = await Promise.all([worker("w1", gateDir), worker("w2", gateDir)]);
    const out = exp.freshOut("two-workers");
    const run = coordinator(out);
    expect(await run.exited).toBe(0);
    const verdict = (await readJson(out, "verdict.json")) as VerdictDocument;
    expect(outcomes(verdict)).toEqual(outcomes(reference));
    expect(verdict.status).toBe(reference.status);
    expect(verdict.reason).toBe(reference.reason);
    // Each trial folder holds the same files with the same content as the local run's.
    for (const trial of reference.trials) {
      const names = (await readdir(join(out, trial.artifactDir))).sort();
      expect(names).toEqual((await readdir(join(referenceOut, trial.artifactDir))).sort());
      for (const name of names.filter((n) => n !== "metrics.json"))
        expect(untimed(await readFile(join(out, trial.artifactDir, name), "utf8"))).toBe(
          untimed(await readFile(join(referenceOut, trial.artifactDir, name), "utf8")),
        );
    }
    // Sealed here with the run's key, as a local run's records are.
    const manifest = (await readJson(out, "manifest.json")) as { evidence: { runId: string } };
    const key = await loadRunKey(defaultStateDir(), manifest.evidence.runId);
    expect(key.ok).toBe(true);
    for (const trial of verdict.trials) {
      const metrics = (await readJson(
        out,
        join(trial.artifactDir, "metrics.json"),
      )) as TrialMetrics;
      expect(
        await verifyRecord(join(out, trial.artifactDir), metrics, key.ok ? key.key : undefined),
      ).toEqual({ ok: true });
    }
    expect(one.output() + two.output()).toMatch(/worker w1: trial \d+ done/);
    expect(one.output() + two.output()).toMatch(/worker w2: trial \d+ done/);

    // Nothing in Redis holds a value of the coordinator's environment.
    const connection = new Redis(redis.url);
    try {
      const leaks: string[] = [];
      for (const key of await connection.keys("*")) {
        const values = await valuesOf(connection, key);
        if (values.some((value) => value.includes(SECRET))) leaks.push(key);
      }
      expect(leaks).toEqual([]);
    } finally {
      connection.disconnect();
    }
    one.child.kill("SIGTERM");
    two.child.kill("SIGTERM");
    expect(await one.exited).toBe(0);
    expect(await two.exited).toBe(0);
  }, 120_000);

  it("a worker SIGKILLed mid-trial loses nothing: another takes its trial, whose record is accepted once", async () => {
    const gateDir = await gate();
    const doomed = await worker("doomed", gateDir);
    const out = exp.freshOut("killed-worker");
    const run = coordinator(out);
    await until(async () => (await started(gateDir)).length > 0);
    const [first] = await started(gateDir);
    const trial = (first as string).replace(/^started-/, "").replace(/-\d+$/, "");
    doomed.child.kill("SIGKILL");
    await doomed.exited;
    await writeFile(join(gateDir, "open-all"), "");
    const rescuer = await worker("rescuer", gateDir);
    expect(await run.exited).toBe(exitFor(reference));
    const verdict = (await readJson(out, "verdict.json")) as VerdictDocument;
    expect(outcomes(verdict)).toEqual(outcomes(reference));
    // The killed worker's trial ran again from the start on the other worker, and only that
    // run's record exists: no second record, no attempt kept.
    const runs = (await started(gateDir)).filter((name) => name.startsWith(`started-${trial}-`));
    expect(runs).toHaveLength(2);
    for (const t of verdict.trials) {
      expect(t.retriedAttempts).toEqual([]);
      expect(existsSync(join(out, t.artifactDir, "attempts"))).toBe(false);
    }
    expect(rescuer.output()).toMatch(
      new RegExp(
        `trial \\d+ \\(${trial.replace(/-(\d+)$/, "/fix-value #$1")}, attempt 1\\) started`,
      ),
    );
    rescuer.child.kill("SIGTERM");
    expect(await rescuer.exited).toBe(0);
  }, 120_000);

  it("a worker stopped with SIGTERM mid-trial hands its trial back at once and exits 0; another runs it", async () => {
    const gateDir = await gate();
    const leaving = await worker("leaving", gateDir);
    const out = exp.freshOut("terminated-worker");
    const run = coordinator(out);
    await until(async () => (await started(gateDir)).length > 0);
    const [first] = await started(gateDir);
    const trial = (first as string).replace(/^started-/, "").replace(/-\d+$/, "");
    leaving.child.kill("SIGTERM");
    // Handed back, not left to a lock timeout: the worker is gone before any other exists.
    expect(await leaving.exited).toBe(0);
    expect(leaving.output()).toContain("terminated: handing the running trials back to the queue");
    expect(leaving.output()).toContain("worker stopped");
    await writeFile(join(gateDir, "open-all"), "");
    const next = await worker("next", gateDir);
    expect(await run.exited).toBe(exitFor(reference));
    const verdict = (await readJson(out, "verdict.json")) as VerdictDocument;
    expect(outcomes(verdict)).toEqual(outcomes(reference));
    const runs = (await started(gateDir)).filter((name) => name.startsWith(`started-${trial}-`));
    expect(runs).toHaveLength(2);
    for (const t of verdict.trials) expect(t.retriedAttempts).toEqual([]);
    next.child.kill("SIGTERM");
    expect(await next.exited).toBe(0);
  }, 120_000);

  it("a worker that cannot run a run's trials hands the job back and stops, saying why; a worker that can runs them", async () => {
    const gateDir = await gate();
    await writeFile(join(gateDir, "open-all"), "");
    const out = exp.freshOut("unfit-worker");
    const run = coordinator(out, ["--unsafe-no-sandbox"]);
    // Started while the run's jobs wait: it may meet one before it says it is taking trials.
    const strict = cli(
      ["worker", "--queue", redis.url, "--name", "sandbox-only", "--lock-ms", "1000"],
      { HL_TEST_GATE: gateDir, TMPDIR: exp.trialsDir },
    );
    expect(await strict.exited).toBe(1);
    expect(strict.output()).toMatch(
      /worker sandbox-only cannot run the trials of run \S+: the run was started with --unsafe-no-sandbox, and this worker runs trials only in the sandbox \(start a worker with --unsafe-no-sandbox to take such runs\); fix this machine and start the worker again/,
    );
    const able = await worker("able", gateDir, ["--unsafe-no-sandbox"]);
    expect(await run.exited).toBe(exitFor(reference));
    const verdict = (await readJson(out, "verdict.json")) as VerdictDocument;
    expect(outcomes(verdict)).toEqual(outcomes(reference));
    able.child.kill("SIGTERM");
    expect(await able.exited).toBe(0);
  }, 120_000);

  it("with no worker the run says how to start one, publishes a bundle that went again, and a late worker finishes it", async () => {
    const connection = new Redis(redis.url);
    try {
      const out = exp.freshOut("no-worker");
      const run = coordinator(out);
      await run.waitFor(`queue: no worker is taking trials from ${redis.url}`);
      expect(run.output()).toContain(`start one with \`harness worker --queue ${redis.url}\``);
      for (const key of await connection.keys(`${KEY_PREFIX}:bundle:*`)) await connection.del(key);
      await run.waitFor("queue: the run's bundle was gone from Redis");
      const gateDir = await gate();
      await writeFile(join(gateDir, "open-all"), "");
      const late = await worker("late-comer", gateDir);
      expect(await run.exited).toBe(exitFor(reference));
      expect(outcomes((await readJson(out, "verdict.json")) as VerdictDocument)).toEqual(
        outcomes(reference),
      );
      late.child.kill("SIGTERM");
      await late.exited;
    } finally {
      connection.disconnect();
    }
  }, 120_000);

  it("trials whose jobs vanish from Redis are infrastructure errors, not a wait forever; --resume --retry-infra runs them", async () => {
    const connection = new Redis(redis.url);
    const queue = queueOf(connection);
    try {
      const out = exp.freshOut("jobs-gone");
      const run = coordinator(out);
      await until(async () => (await queue.getWaitingCount()) === reference.trials.length);
      await queue.obliterate({ force: true });
      expect(await run.exited).toBe(1);
      const verdict = (await readJson(out, "verdict.json")) as VerdictDocument;
      expect(verdict.trials.map((t) => t.infraReason)).toEqual(
        reference.trials.map(() => "harness_error"),
      );
      expect(run.output()).toContain("is gone from Redis");
      await finishWithNewWorker(out, "after-loss", ["--resume", "--retry-infra", "1"]);
    } finally {
      await queue.close();
      connection.disconnect();
    }
  }, 90_000);

  it("a coordinator killed mid-run and resumed takes the results its workers finished meanwhile", async () => {
    const gateDir = await gate();
    const steady = await worker("steady", gateDir);
    const out = exp.freshOut("killed-coordinator");
    const first = coordinator(out);
    await until(async () => (await started(gateDir)).length > 0);
    const [name] = await started(gateDir);
    await writeFile(
      join(gateDir, `open-${(name as string).replace(/^started-/, "").replace(/-\d+$/, "")}`),
      "",
    );
    await until(async () => (await finishedTrials(out)) >= 1);
    first.child.kill("SIGKILL");
    await first.exited;
    await writeFile(join(gateDir, "open-all"), "");
    const resumed = coordinator(out, ["--resume"]);
    expect(await resumed.exited).toBe(exitFor(reference));
    const verdict = (await readJson(out, "verdict.json")) as VerdictDocument;
    expect(outcomes(verdict)).toEqual(outcomes(reference));
    expect(verdict.resumedTrials).toBeGreaterThanOrEqual(1);
    const connection = new Redis(redis.url);
    const queue = queueOf(connection);
    try {
      const counts = await queue.getJobCounts("waiting", "active", "completed", "failed");
      expect(counts).toEqual({ waiting: 0, active: 0, completed: 0, failed: 0 });
    } finally {
      await queue.close();
      connection.disconnect();
    }
    steady.child.kill("SIGTERM");
    expect(await steady.exited).toBe(0);
  }, 120_000);

  it("Ctrl-C removes the run's queued trials and exits 130; --resume finishes the run", async () => {
    const connection = new Redis(redis.url);
    const queue = queueOf(connection);
    try {
      const out = exp.freshOut("ctrl-c");
      const run = coordinator(out);
      await until(async () => (await queue.getWaitingCount()) === reference.trials.length);
      run.child.kill("SIGINT");
      expect(await run.exited).toBe(130);
      expect(await queue.getJobCounts("waiting", "active", "completed", "failed")).toEqual({
        waiting: 0,
        active: 0,
        completed: 0,
        failed: 0,
      });
      const stopped = (await readJson(out, "verdict.json")) as VerdictDocument;
      expect(stopped.interrupted).toBe(true);
      await finishWithNewWorker(out, "after-ctrl-c", ["--resume"]);
    } finally {
      await queue.close();
      connection.disconnect();
    }
  }, 120_000);

  it("a worker refuses a job of another harnesslab version with a clear error", async () => {
    const gateDir = await gate();
    const strict = await worker("strict", gateDir);
    try {
      await withQueueEvents(async (queue, events) => {
        const job = await queue.add("trial", {
          protocol: QUEUE_PROTOCOL,
          harnesslab: "0.0.0-other",
          runId: "r",
        });
        const result = (await job.waitUntilFinished(events)) as Record<string, unknown>;
        expect(result).toMatchObject({ kind: "refused", worker: "strict", code: "version" });
        expect(result.message).toBe(
          `worker strict runs harnesslab ${HARNESSLAB_VERSION} (queue protocol ${QUEUE_PROTOCOL}); the run's coordinator sent harnesslab 0.0.0-other (queue protocol ${QUEUE_PROTOCOL}): run the same harnesslab version on the coordinator and every worker`,
        );
        await strict.waitFor("refused job");
      });
    } finally {
      strict.child.kill("SIGTERM");
      await strict.exited;
    }
  }, 60_000);

  it("a bundle evicted from Redis while its trials wait is published again: the worker that meets it gone runs nothing, and the trials run once it is back", async () => {
    const connection = new Redis(redis.url);
    const queue = queueOf(connection);
    try {
      const out = exp.freshOut("no-bundle");
      const run = coordinator(out);
      await until(async () => (await queue.getWaitingCount()) === reference.trials.length);
      for (const key of await connection.keys(`${KEY_PREFIX}:bundle:*`)) await connection.del(key);
      const gateDir = await gate();
      await writeFile(join(gateDir, "open-all"), "");
      // Whichever comes first (the coordinator's own look, or a worker's refusal of a job whose
      // bundle is gone), the bundle is published again and every trial runs once.
      const late = await worker("late", gateDir);
      expect(await run.exited).toBe(exitFor(reference));
      expect(outcomes((await readJson(out, "verdict.json")) as VerdictDocument)).toEqual(
        outcomes(reference),
      );
      expect(run.output()).toMatch(
        /bundle (was )?gone from Redis at redis:\/\/127\.0\.0\.1:\d+.*published it again/,
      );
      expect(await started(gateDir)).toHaveLength(reference.trials.length);
      late.child.kill("SIGTERM");
      expect(await late.exited).toBe(0);
    } finally {
      await queue.close();
      connection.disconnect();
    }
  }, 120_000);

  it("a worker given a job whose bundle is not in Redis refuses it as bundle-missing, naming the bundle, and runs nothing", async () => {
    const gateDir = await gate();
    const careful = await worker("careful", gateDir);
    try {
      await withQueueEvents(async (queue, events) => {
        const bundle = `sha256:${"ab".repeat(32)}`;
        const job = await queue.add("trial", {
          protocol: QUEUE_PROTOCOL,
          harnesslab: HARNESSLAB_VERSION,
          runId: "run-without-bundle",
          bundle,
          bundleRoot: "/nowhere",
          trials: 2,
          calibrate: false,
          unsafeNoSandbox: false,
          keepForgeRepos: false,
          harnessHash: "sha256:0",
          fixtureHash: "sha256:0",
          trial: { seq: 1, task: "fix-value", variant: "baseline", trialIndex: 1 },
          attempt: 1,
        });
        const result = (await job.waitUntilFinished(events)) as Record<string, unknown>;
        expect(result).toMatchObject({
          kind: "refused",
          worker: "careful",
          code: "bundle-missing",
        });
        expect(result.message).toMatch(
          new RegExp(
            `the run's bundle ${bundle} is not in Redis at redis://127\\.0\\.0\\.1:\\d+ \\(it expired or was removed\\)`,
          ),
        );
        expect(await started(gateDir)).toEqual([]);
      });
    } finally {
      careful.child.kill("SIGTERM");
      await careful.exited;
    }
  }, 60_000);

  it("a bundle that Redis keeps evicting makes each trial an infrastructure error after a few republishes, not a loop", async () => {
    // A worker that speaks the protocol and always finds the bundle gone (as behind a Redis
    // whose maxmemory cannot hold it).
    const refusals: number[] = [];
    const workerConnection = new Redis(redis.url, { maxRetriesPerRequest: null });
    const evicting = new Worker(
      TRIALS_QUEUE,
      async (job) => {
        refusals.push((job.data as { trial: { seq: number } }).trial.seq);
        return {
          kind: "refused",
          worker: "evicting",
          code: "bundle-missing",
          message: "the run's bundle is not in Redis",
        };
      },
      { connection: workerConnection, prefix: KEY_PREFIX },
    );
    try {
      const out = exp.freshOut("evicting");
      const lines: string[] = [];
      const { verdict } = await runManifest(exp.manifestPath, {
        outDir: out,
        tempParent: exp.trialsDir,
        trialPlace: queueTrials({
          address: { url: redis.url, shown: redis.url },
          log: (line) => lines.push(line),
        }),
      });
      expect(verdict.status).toBe("infrastructure_error");
      expect(verdict.trials.map((t) => t.infraReason)).toEqual(
        reference.trials.map(() => "harness_error"),
      );
      expect(verdict.trials[0]?.explanation).toMatch(
        /Redis is evicting it \(check its maxmemory and maxmemory-policy\)/,
      );
      // Each trial was queued once and then again after each of 3 republishes.
      for (const trial of reference.trials)
        expect(refusals.filter((seq) => seq === trial.seq)).toHaveLength(4);
      expect(
        lines.filter((line) => line.includes("published it again and queued trial")),
      ).toHaveLength(3 * reference.trials.length);
    } finally {
      await evicting.close();
      workerConnection.disconnect();
    }
  }, 120_000);

  // Last: it takes Redis away.
  it("Redis going away mid-run stops the run with an error naming it (exit 1, resumable)", async () => {
    const gateDir = await gate();
    const orphan = await worker("orphan", gateDir);
    const out = exp.freshOut("redis-gone");
    const run = coordinator(out);
    await until(async () => (await started(gateDir)).length > 0);
    await redis.kill();
    expect(await run.exited).toBe(1);
    expect(run.output()).toContain(`lost the connection to Redis at ${redis.url}`);
    const stopped = (await readJson(out, "verdict.json")) as VerdictDocument;
    expect(stopped.interrupted).toBe(true);
    expect(stopped.reason).toMatch(
      new RegExp(
        `^the run stopped after 0 of 4 trials: lost the connection to Redis at ${redis.url.replace(/[./]/g, "\\$&")} .*; run again with --resume to finish it$`,
      ),
    );
    expect(await orphan.exited).toBe(1);
    expect(orphan.output()).toContain(`lost the connection to Redis at ${redis.url}`);

    await redis.restart();
    await finishWithNewWorker(out, "fresh", ["--resume"]);
  }, 120_000);
});

/** The exit code `compare run` gives a verdict. */
function exitFor(verdict: VerdictDocument): number {
  return verdict.status === "accept" || verdict.status === "need_more_work" ? 0 : 1;
}

/** How many trials of a run in `out` have their record. */
async function finishedTrials(out: string): Promise<number> {
  let count = 0;
  for (const variant of ["baseline", "fixer"])
    for (const trial of ["trial-001", "trial-002"])
      if (existsSync(join(out, variant, "fix-value", trial, "metrics.json"))) count += 1;
  return count;
}

/** A file's text with the times in it (durations, offsets, a test runner's timings) left out. */
function untimed(text: string): string {
  return text
    .replace(/"(atMs|durationMs|wallTimeMs|elapsedMs|agentMs|apiMs)": \d+(\.\d+)?/g, '"$1": 0')
    .replace(/duration_ms:? [\d.]+/g, "duration_ms 0");
}

/** Every value a key holds, as text (a bundle unpacked from its gzip). */
async function valuesOf(connection: Redis, key: string): Promise<string[]> {
  const type = await connection.type(key);
  if (type === "string") {
    const bytes = (await connection.getBuffer(key)) ?? Buffer.alloc(0);
    return [
      key.startsWith(`${KEY_PREFIX}:bundle:`) ? gunzipSync(bytes).toString() : bytes.toString(),
    ];
  }
  if (type === "hash") return Object.values(await connection.hgetall(key));
  if (type === "list") return connection.lrange(key, 0, -1);
  if (type === "set") return connection.smembers(key);
  if (type === "zset") return connection.zrange(key, "0", "-1");
  if (type === "stream")
    return (await connection.xrange(key, "-", "+")).flatMap(([, fields]) => fields);
  return [];
}

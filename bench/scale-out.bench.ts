// Scale-out through the queue (issue 13): trials per minute of `compare run --queue` with 1, 2 and
// 4 `harness worker` processes (concurrency 1 each) against one local redis-server, and what the
// queue adds to each trial against a local `compare run --concurrency 1`. Every run is the real
// CLI in processes of its own (from source, through tsx, as the queue tests run it) on a small
// synthetic experiment whose agents sleep 1.5 s and then write one file: sleeping agents model
// the wait on a model that dominates real trials. Speed-ups are against 1 worker measured in the
// same run. Goals: 2 workers >= 1.8× one; the queue adds < 50 ms per trial.
//
// The latency the queue adds per trial comes from runs of 6 and 12 trials, local and queued with
// 1 worker, and has two parts, each free of what a run pays once (process start-up, connections,
// the bundle published and loaded): how much longer the trial itself (its runTrial, `durationMs`)
// takes on the worker than in the local run, and the slope from 6 to 12 trials of the run's time
// outside its trials (the verdict's startedAt → finishedAt, minus Σ durationMs), queued minus
// local. The goal is judged on their sum. The slopes of the run's whole time and of the process's
// wall time are printed as a cross-check, with each round's value to show how much they vary.
// And directly: the times Redis stamps on the queue's job events (added, taken, done, removed
// once the coordinator has the result), less each trial's durationMs. Two rounds; the bench
// takes about 3 minutes on 2 cores.
import { existsSync } from "node:fs";
import { readFile, rm } from "node:fs/promises";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import type { VerdictDocument } from "../src/artifacts/index.js";
import { KEY_PREFIX, TRIALS_QUEUE } from "../src/compare/queue/protocol.js";
import { type SpawnedHarness, spawnHarness } from "../test/support/cli.js";
import {
  makeExperiment,
  syntheticManifest,
  type TempExperiment,
} from "../test/support/experiment.js";
import { findRedisServer, startRedis } from "../test/support/redis.js";
import { median } from "./workspace.bench.js";

const SPEED_UP_GOAL = 1.8;
const LATENCY_GOAL_MS = 50;
const SLEEP_MS = 1500;
/** Trials per variant (2 variants, 1 task) of the scale-out runs; the latency runs take half too. */
const TRIALS_PER_VARIANT = 6;
const WORKERS = [1, 2, 4] as const;
const ROUNDS = 2;
/** A run that takes longer than this is stuck (a lost worker, a lost job): it is stopped. */
const RUN_TIMEOUT_MS = 180_000;

/** Sleeps as an agent waiting on a model does, then writes `value` to the file the task names. */
const SLEEPER = (value: string) => `import { setTimeout as sleep } from "node:timers/promises";
export default async function sleeper({ tools }) {
  await sleep(${SLEEP_MS});
  const write = await tools.write("src/value.txt", ${JSON.stringify(`${value}\n`)});
  if (!write.ok) throw new Error("write refused: " + (write.reason ?? write.error));
  return "slept ${SLEEP_MS} ms, then wrote src/value.txt";
}
`;

/** Stops a process: SIGTERM, then SIGKILL if it has not exited within `graceMs`. */
async function stop(spawned: SpawnedHarness, graceMs = 5_000): Promise<void> {
  const { child } = spawned;
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGTERM");
  const exited = await Promise.race([
    spawned.exited.then(() => true),
    sleep(graceMs, false, { ref: false }),
  ]);
  if (!exited) {
    child.kill("SIGKILL");
    await spawned.exited;
  }
}

interface Run {
  trials: number;
  /** From starting the coordinator process to its exit, in ms. */
  wallMs: number;
  /** Epoch ms at those two moments (the clock Redis stamps its events with). */
  startedAt: number;
  endedAt: number;
  verdict: VerdictDocument;
}

/** Runs `compare run` to its end; throws (with its output) unless every trial ran. */
async function compareRun(
  exp: TempExperiment,
  env: Record<string, string>,
  name: string,
  trialsPerVariant: number,
  extra: string[],
): Promise<Run> {
  const out = exp.freshOut(name);
  const startedAt = Date.now();
  const started = performance.now();
  const run = spawnHarness(
    [
      "compare",
      "run",
      exp.manifestPath,
      "--out",
      out,
      "--trials",
      String(trialsPerVariant),
      ...extra,
    ],
    env,
  );
  try {
    const code = await Promise.race([run.exited, sleep(RUN_TIMEOUT_MS, "timeout", { ref: false })]);
    const wallMs = performance.now() - started;
    const endedAt = Date.now();
    const verdictPath = join(out, "verdict.json");
    const verdict = existsSync(verdictPath)
      ? (JSON.parse(await readFile(verdictPath, "utf8")) as VerdictDocument)
      : undefined;
    const broken = verdict?.trials.find((t) => t.outcome === "infrastructure_error");
    const trials = trialsPerVariant * 2;
    if (code !== 0 || verdict === undefined || verdict.trials.length !== trials || broken)
      throw new Error(
        `compare run ${extra.join(" ")} went wrong (${code === "timeout" ? `still running after ${RUN_TIMEOUT_MS / 1000} s` : `exit ${code}`}${broken ? `; ${broken.explanation}` : ""}):\n${run.output()}`,
      );
    return { trials, wallMs, startedAt, endedAt, verdict };
  } finally {
    await stop(run);
    await rm(out, { recursive: true, force: true });
  }
}

/** When Redis saw each of a job's events (epoch ms), by the trial's number. */
interface JobTimes {
  seq: number;
  added?: number;
  active?: number;
  completed?: number;
  removed?: number;
}

/** The queue's event stream, read back after a run: each job's events and when they happened. */
async function jobTimes(url: string): Promise<JobTimes[]> {
  const connection = new Redis(url);
  try {
    const entries = await connection.xrange(`${KEY_PREFIX}:${TRIALS_QUEUE}:events`, "-", "+");
    const jobs = new Map<number, JobTimes>();
    for (const [id, fields] of entries) {
      const at = Number(id.split("-")[0]);
      const field = (name: string) => fields[fields.indexOf(name) + 1];
      const event = field("event");
      // Job ids are `<run id>-<seq>-<attempt>`.
      const seq = Number(/-(\d+)-\d+$/.exec(field("jobId") ?? "")?.[1]);
      if (!Number.isInteger(seq)) continue;
      if (event !== "added" && event !== "active" && event !== "completed" && event !== "removed")
        continue;
      const job = jobs.get(seq) ?? { seq };
      job[event] ??= at;
      jobs.set(seq, job);
    }
    return [...jobs.values()].sort((a, b) => a.seq - b.seq);
  } finally {
    connection.disconnect();
  }
}

interface QueuedRun extends Run {
  workers: number;
  jobs: JobTimes[];
}

/** A queued run on a fresh redis-server with `workers` fresh worker processes, started first. */
async function queuedRun(
  exp: TempExperiment,
  env: Record<string, string>,
  name: string,
  workers: number,
  trialsPerVariant: number,
): Promise<QueuedRun> {
  const redis = await startRedis();
  const started: SpawnedHarness[] = [];
  try {
    for (let i = 1; i <= workers; i++)
      started.push(
        spawnHarness(
          ["worker", "--queue", redis.url, "--name", `w${i}`, "--concurrency", "1"],
          env,
        ),
      );
    await Promise.all(started.map((w, i) => w.waitFor(`worker w${i + 1}: taking trials`)));
    const run = await compareRun(exp, env, name, trialsPerVariant, ["--queue", redis.url]);
    const jobs = await jobTimes(redis.url);
    if (jobs.length !== run.trials || jobs.some((j) => !j.active || !j.completed || !j.removed))
      throw new Error(`the queue's events of ${name} miss some trials' jobs`);
    return { ...run, workers, jobs };
  } finally {
    await Promise.all(started.map((w) => stop(w)));
    await redis.stop();
  }
}

/** The phases of a queued run, from its job events (Redis's clock) and the coordinator's start and exit. */
function phases(run: QueuedRun) {
  const firstAdded = Math.min(...run.jobs.map((j) => j.added ?? j.active!));
  const firstTaken = Math.min(...run.jobs.map((j) => j.active!));
  const lastDone = Math.max(...run.jobs.map((j) => j.completed!));
  return {
    /** Coordinator start to the first job taken: process start-up, preflight, bundle published. */
    headMs: firstTaken - run.startedAt,
    firstAddedMs: firstAdded - run.startedAt,
    /** First job taken to the last one done: the workers at work. */
    busyMs: lastDone - firstTaken,
    /** Last job done to the coordinator's exit: the last result taken, the verdict written. */
    tailMs: run.endedAt - lastDone,
  };
}

const perMinute = (trials: number, ms: number) => (trials * 60_000) / ms;
const seconds = (ms: number) => (ms / 1000).toFixed(2);
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
const durations = (run: Run) => run.verdict.trials.map((t) => t.durationMs);
/** The run's own time, as its verdict gives it: from its preflight to its verdict (no process start-up). */
const spanOf = (run: Run) => Date.parse(run.verdict.finishedAt) - Date.parse(run.verdict.startedAt);
/** The run's time outside its trials' own runTrial time (meaningful when trials run one at a time). */
const outside = (run: Run) => spanOf(run) - sum(durations(run));
const perRound = (values: number[], format: (v: number) => string) =>
  values.length > 1 ? ` (rounds: ${values.map(format).join(", ")})` : "";
const ms = (v: number) => `${v.toFixed(0)} ms`;

/** One round: local and queued runs of half and all the trials, then 1, 2 and 4 workers. */
interface Round {
  localHalf: Run;
  queuedHalf: QueuedRun;
  local: Run;
  /** By WORKERS; the first (1 worker, all the trials) is also the latency's queued run. */
  scaled: QueuedRun[];
}

export async function run(): Promise<void> {
  if (findRedisServer() === undefined) {
    console.log(
      "skipped: redis-server is not installed (apt-get install redis-server); the queue needs one to measure",
    );
    return;
  }
  const exp = await makeExperiment({
    agents: { "sleep-then-fix.mjs": SLEEPER("fixed"), "sleep-then-miss.mjs": SLEEPER("wrong") },
  });
  try {
    await exp.writeManifest(
      syntheticManifest({
        variants: [
          { id: "baseline", composition: "plain", agent: "./agents/sleep-then-miss.mjs" },
          { id: "fixer", composition: "careful", agent: "./agents/sleep-then-fix.mjs" },
        ],
        trials: { count: TRIALS_PER_VARIANT, seed: 7, order: "randomized" },
      }),
    );
    // Run keys go to a throwaway state directory, never the user's own.
    const env = { HARNESSLAB_STATE_DIR: join(exp.base, "state") };
    const half = TRIALS_PER_VARIANT / 2;
    const local = ["--concurrency", "1"];
    // Warm tsx's cache, git, the sandbox and the page cache before anything is timed.
    await compareRun(exp, env, "warm-up", 1, local);

    // Local and queued alternate within a round, so load that drifts during the bench touches
    // both alike; each speed-up and each slope is taken within its round.
    const rounds: Round[] = [];
    for (let r = 1; r <= ROUNDS; r++) {
      const localHalf = await compareRun(exp, env, `local-half-${r}`, half, local);
      const queuedHalf = await queuedRun(exp, env, `queued-half-${r}`, 1, half);
      const localAll = await compareRun(exp, env, `local-${r}`, TRIALS_PER_VARIANT, local);
      const scaled: QueuedRun[] = [];
      for (const workers of WORKERS)
        scaled.push(
          await queuedRun(exp, env, `queued-${workers}-${r}`, workers, TRIALS_PER_VARIANT),
        );
      rounds.push({ localHalf, queuedHalf, local: localAll, scaled });
    }

    console.log(
      `1 task, 2 variants, agents that sleep ${SLEEP_MS / 1000} s then write one file (graders: scope + \`node check.mjs\`, sandboxed); the harness CLI from source (tsx) in processes of its own; one redis-server on loopback; ${availableParallelism()} CPUs; ${ROUNDS} rounds, medians over them.`,
    );
    console.log(
      "Sleeping agents model the wait on a model that dominates real trials: a worker waiting on its agent leaves the CPUs to the others, which is why worker processes scale past 2 cores.",
    );
    console.log(
      "\n| workers (concurrency 1 each) | trials | wall s (coordinator start → exit) | trials per minute | speed-up vs 1 worker (median per round) | goal | coordinator start → first trial taken s | first trial taken → last done s | speed-up of that span | last done → exit s | median trial ms (durationMs) |",
    );
    console.log("|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|");
    WORKERS.forEach((workers, i) => {
      const runs = rounds.map((round) => round.scaled[i]!);
      const wall = median(runs.map((r) => r.wallMs));
      const speedUp = median(
        rounds.map((round) => round.scaled[0]!.wallMs / round.scaled[i]!.wallMs),
      );
      const busySpeedUp = median(
        rounds.map((round) => phases(round.scaled[0]!).busyMs / phases(round.scaled[i]!).busyMs),
      );
      const phase = (name: "headMs" | "busyMs" | "tailMs") =>
        seconds(median(runs.map((r) => phases(r)[name])));
      const goal =
        workers === 2 ? `${speedUp >= SPEED_UP_GOAL ? "ok" : "MISSED"} (>= ${SPEED_UP_GOAL})` : "";
      console.log(
        `| ${workers} | ${runs[0]!.trials} | ${seconds(wall)} | ${perMinute(runs[0]!.trials, wall).toFixed(1)} | ${speedUp.toFixed(2)}× | ${goal} | ${phase("headMs")} | ${phase("busyMs")} | ${busySpeedUp.toFixed(2)}× | ${phase("tailMs")} | ${median(runs.flatMap(durations)).toFixed(0)} |`,
      );
    });

    // Per trial: slopes from half to all the trials, queue − local, so one-off costs fall out.
    const slopes = rounds.map((round) => {
      const queued = round.scaled[0]!;
      const added = queued.trials - round.queuedHalf.trials;
      const slope = (measure: (r: Run) => number) => ({
        local: (measure(round.local) - measure(round.localHalf)) / added,
        queue: (measure(queued) - measure(round.queuedHalf)) / added,
      });
      const between = slope(outside);
      // How much longer (or shorter) the trial itself takes on a worker than in a local run.
      const trial =
        median([...durations(round.queuedHalf), ...durations(queued)]) -
        median([...durations(round.localHalf), ...durations(round.local)]);
      return {
        trial,
        between,
        total: trial + between.queue - between.local,
        span: slope(spanOf),
        wall: slope((r) => r.wallMs),
        oneOff:
          outside(round.queuedHalf) -
          outside(round.localHalf) -
          round.queuedHalf.trials * (between.queue - between.local),
        naive: (queued.wallMs - round.local.wallMs) / queued.trials,
      };
    });
    const kinds = [
      ["local, --concurrency 1", (round: Round) => round.localHalf],
      ["local, --concurrency 1", (round: Round) => round.local],
      ["queue, 1 worker", (round: Round) => round.queuedHalf],
      ["queue, 1 worker", (round: Round) => round.scaled[0]!],
    ] as const;
    console.log(
      "\n| run | trials | wall s (process start → exit) | run s (verdict startedAt → finishedAt) | trials' own time s (Σ durationMs) | run − trials' own time s | median trial ms |",
    );
    console.log("|---|---:|---:|---:|---:|---:|---:|");
    for (const [name, pick] of kinds) {
      const runs = rounds.map(pick);
      const col = (measure: (r: Run) => number) => seconds(median(runs.map(measure)));
      console.log(
        `| ${name} | ${runs[0]!.trials} | ${col((r) => r.wallMs)} | ${col(spanOf)} | ${col((r) => sum(durations(r)))} | ${col(outside)} | ${median(runs.flatMap(durations)).toFixed(0)} |`,
      );
    }
    const first = rounds[0]!;
    type Slope = { local: number; queue: number };
    const added = (pick: (s: (typeof slopes)[number]) => Slope) => {
      const values = slopes.map((s) => pick(s).queue - pick(s).local);
      const local = median(slopes.map((s) => pick(s).local));
      const queue = median(slopes.map((s) => pick(s).queue));
      return {
        value: median(values),
        text: `local ${ms(local)}, queue ${ms(queue)} → the queue adds ${ms(median(values))} per trial${perRound(values, ms)}`,
      };
    };
    const between = added((s) => s.between);
    const trial = slopes.map((s) => s.trial);
    const total = slopes.map((s) => s.total);
    console.log(`\nWhat the queue adds to each trial, queue − local (one-off costs left out):`);
    console.log(
      `- the trial itself on the worker (median durationMs, queue − local): ${ms(median(trial))}${perRound(trial, ms)}`,
    );
    console.log(
      `- the run's time outside its trials (run − Σ durationMs), slope from ${first.queuedHalf.trials} to ${first.scaled[0]!.trials} trials: ${between.text}`,
    );
    console.log(
      `- the two together: ${ms(median(total))} per trial${perRound(total, ms)} (goal < ${LATENCY_GOAL_MS} ms: ${median(total) < LATENCY_GOAL_MS ? "ok" : "MISSED"})`,
    );
    console.log(
      `- cross-check, the slope of the run's whole time (verdict startedAt → finishedAt): ${added((s) => s.span).text}; of the process's wall time: ${added((s) => s.wall).text}. These also hold how the trials' time and the process start-up vary between runs.`,
    );
    const startUp = (pick: (round: Round) => Run) =>
      ms(median(rounds.map((round) => pick(round).wallMs - spanOf(pick(round)))));
    console.log(
      `Once per run: the queue − local intercept of the first slope (connections, bundle packed and published, the worker's first job loading the run) ${ms(median(slopes.map((s) => s.oneOff)))}${perRound(
        slopes.map((s) => s.oneOff),
        ms,
      )}; process start-up and exit outside the run: local ${startUp((round) => round.local)}, queue ${startUp((round) => round.scaled[0]!)}. (queue − local) / trials at ${first.scaled[0]!.trials} trials, everything included: ${ms(median(slopes.map((s) => s.naive)))}.`,
    );

    // Directly, from the times Redis stamped on the job events of the 1-worker runs of all the
    // trials (every round's, pooled).
    const pickups: number[] = [];
    const workerFirst: number[] = [];
    const workerExtra: number[] = [];
    const delivery: number[] = [];
    const firstAdded: number[] = [];
    for (const round of rounds) {
      const queued = round.scaled[0]!;
      const jobs = [...queued.jobs].sort((a, b) => a.active! - b.active!);
      const bySeq = new Map(queued.verdict.trials.map((t) => [t.seq, t.durationMs]));
      pickups.push(...jobs.slice(1).map((j, i) => j.active! - jobs[i]!.completed!));
      const extra = jobs.map((j) => j.completed! - j.active! - bySeq.get(j.seq)!);
      workerFirst.push(extra[0]!);
      workerExtra.push(...extra.slice(1));
      delivery.push(...jobs.map((j) => j.removed! - j.completed!));
      firstAdded.push(phases(queued).firstAddedMs);
    }
    const direct = median(pickups) + median(workerExtra) + median(delivery) + median(trial);
    console.log(
      `\nThe queue's own steps, from the times Redis stamped on the job events of the ${first.scaled[0]!.trials}-trial runs with 1 worker (each trial's runTrial time, its durationMs, taken out), and the trial's own time on the worker:`,
    );
    console.log("| step | median ms | max ms | goal |");
    console.log("|---|---:|---:|---|");
    const row = (name: string, values: number[]) =>
      console.log(
        `| ${name} | ${median(values).toFixed(0)} | ${Math.max(...values).toFixed(0)} | |`,
      );
    row("the worker takes the next job (previous job done → next taken)", pickups);
    row(
      "the worker's work outside runTrial (job taken → done, − durationMs), 2nd trial on",
      workerExtra,
    );
    row("the coordinator has the result (job done → removed from Redis)", delivery);
    row("the trial itself on the worker (median durationMs, queue − local; per round)", trial);
    console.log(
      `| per trial, the four together | ${direct.toFixed(0)} | | ${direct < LATENCY_GOAL_MS ? "ok" : "MISSED"} (< ${LATENCY_GOAL_MS} ms) |`,
    );
    row(
      "one-off: the worker's first job (bundle fetched, unpacked, loaded, prepared)",
      workerFirst,
    );
    row(
      "one-off: coordinator start → first job added (start-up, preflight, bundle published)",
      firstAdded,
    );
  } finally {
    await exp.cleanup();
  }
}

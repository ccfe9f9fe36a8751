// Throughput of the comparison runner's worker pool: the example experiment (one task, its
// fixture and graders) with 2 variants × 4 trials, run through `runExperiment` on the scripted
// host at concurrency 1, 2 and 4, once with the `nop` agent and once with a scripted agent that
// waits 2 s (as an agent waiting on a model does). Speed-ups are against concurrency 1 measured
// in the same run. Goal (issue 7): >= 1.8× at concurrency 2 for the waiting agent on a 2-core
// machine.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type AgentSpec,
  type Experiment,
  loadHarnessCatalog,
  loadManifest,
  runExperiment,
} from "../src/compare/index.js";
import { ScriptedExecutor } from "../src/exec/index.js";
import { median } from "./workspace.bench.js";

const GOAL = 1.8;
const TRIALS_PER_VARIANT = 4;
const CONCURRENCIES = [1, 2, 4] as const;
const SLEEP_MS = 2000;
const EXAMPLE = fileURLToPath(new URL("../examples/fix-the-bug/", import.meta.url));

const SLEEPER_AGENT = `export default async function sleeper() {
  await new Promise((resolve) => setTimeout(resolve, ${SLEEP_MS}));
  return "waited ${SLEEP_MS} ms";
}
`;

/** The example experiment with every variant running `agent`, 4 trials each. */
async function experimentWith(agent: AgentSpec): Promise<Experiment> {
  const loaded = await loadManifest(join(EXAMPLE, "experiment.json"), {
    trialsOverride: TRIALS_PER_VARIANT,
    loadCatalog: loadHarnessCatalog,
  });
  if (!loaded.ok) throw new Error(loaded.problems.map((p) => p.message).join("; "));
  return {
    ...loaded.experiment,
    variants: loaded.experiment.variants.map((variant) => ({ ...variant, agent })),
  };
}

/** Wall time of one whole run, in ms. */
async function timeRun(experiment: Experiment, concurrency: number, dir: string): Promise<number> {
  const outDir = await mkdtemp(join(dir, "out-"));
  const tempParent = await mkdtemp(join(dir, "trials-"));
  await rm(outDir, { recursive: true });
  try {
    const started = performance.now();
    const { verdict } = await runExperiment(experiment, {
      outDir,
      manifestDocument: {},
      manifestHash: "0".repeat(64),
      concurrency,
      executorFor: () => new ScriptedExecutor({ secretValues: [] }),
      tempParent,
      env: {},
    });
    const elapsed = performance.now() - started;
    const broken = verdict.trials.filter((t) => t.outcome === "infrastructure_error");
    if (broken.length > 0) throw new Error(`a trial failed to run: ${broken[0]!.explanation}`);
    return elapsed;
  } finally {
    await rm(outDir, { recursive: true, force: true });
    await rm(tempParent, { recursive: true, force: true });
  }
}

interface Row {
  agent: string;
  concurrency: number;
  trials: number;
  rounds: number;
  /** Median over the rounds. */
  wallMs: number;
  /** Median over the rounds of (concurrency 1's wall time / this one's), same round. */
  speedUp: number;
}

export async function run(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "hl-bench-concurrency-"));
  try {
    const agentsDir = join(dir, "agents");
    await mkdir(agentsDir);
    const sleeperPath = join(agentsDir, "sleep-2s.mjs");
    await writeFile(sleeperPath, SLEEPER_AGENT);
    // The nop runs take a few seconds and vary more, so they get more rounds.
    const agents: Array<[string, AgentSpec, number]> = [
      ["nop", { kind: "nop" }, 3],
      [`sleeps ${SLEEP_MS / 1000} s`, { kind: "module", modulePath: sleeperPath }, 1],
    ];
    // Warm module loading, git and the page cache before anything is timed.
    await timeRun(await experimentWith({ kind: "nop" }), 2, dir);

    const rows: Row[] = [];
    for (const [name, agent, rounds] of agents) {
      const experiment = await experimentWith(agent);
      const trials = experiment.variants.length * experiment.trials.count;
      // Rounds of 1, 2, 4: each speed-up is against concurrency 1 of its own round, so load that
      // drifts during the benchmark (other processes on the machine) touches both sides alike.
      const samples = new Map<number, { wall: number[]; speedUp: number[] }>(
        CONCURRENCIES.map((c) => [c, { wall: [], speedUp: [] }]),
      );
      for (let round = 0; round < rounds; round++) {
        let sequentialMs = 0;
        for (const concurrency of CONCURRENCIES) {
          const wallMs = await timeRun(experiment, concurrency, dir);
          if (concurrency === 1) sequentialMs = wallMs;
          samples.get(concurrency)!.wall.push(wallMs);
          samples.get(concurrency)!.speedUp.push(sequentialMs / wallMs);
        }
      }
      for (const [concurrency, s] of samples)
        rows.push({
          agent: name,
          concurrency,
          trials,
          rounds,
          wallMs: median(s.wall),
          speedUp: median(s.speedUp),
        });
    }

    console.log(
      `examples/fix-the-bug (graders: scope + npm test), scripted host, ${availableParallelism()} CPUs`,
    );
    console.log(
      "| agent | concurrency | trials | rounds | wall time s (median) | trials per minute | speed-up vs concurrency 1 (median per round) | goal |",
    );
    console.log("|---|---:|---:|---:|---:|---:|---:|---|");
    for (const r of rows) {
      const goal =
        r.agent !== "nop" && r.concurrency === 2
          ? `${r.speedUp >= GOAL ? "ok" : "MISSED"} (>= ${GOAL})`
          : "";
      console.log(
        `| ${r.agent} | ${r.concurrency} | ${r.trials} | ${r.rounds} | ${(r.wallMs / 1000).toFixed(2)} | ${((r.trials * 60_000) / r.wallMs).toFixed(1)} | ${r.speedUp.toFixed(2)}× | ${goal} |`,
      );
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

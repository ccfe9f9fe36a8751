// What containment costs (the containment issue's goal: under 100 ms per sandboxed command).
// Per command: `true` and `node -e 0` started plainly (runCommand, as before the sandbox) and in
// bubblewrap, interleaved so both see the same machine load; the overhead is the difference of
// medians. Per trial: the example experiment (graders scope + `npm test`, the oracle agent, whose
// fix makes `npm test` run the fixture's tests) through runExperiment with the sandbox and with
// --unsafe-no-sandbox, in the same run.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type Experiment,
  loadHarnessCatalog,
  loadManifest,
  runExperiment,
} from "../src/compare/index.js";
import { ScriptedExecutor } from "../src/exec/index.js";
import { createBwrapSandbox, detectSandbox } from "../src/sandbox/index.js";
import { runCommand } from "../src/shared/index.js";
import { median } from "./workspace.bench.js";

const ROUNDS = 30;
const TRIAL_ROUNDS = 3;
const GOAL_MS = 100;
const EXAMPLE = fileURLToPath(new URL("../examples/fix-the-bug/", import.meta.url));

async function commandOverhead(label: string, argv: string[], dir: string): Promise<void> {
  const support = await detectSandbox();
  if (!support.available) throw new Error(`no sandbox here: ${support.reason}`);
  const sandbox = createBwrapSandbox(support);
  const plain: number[] = [];
  const contained: number[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    let started = performance.now();
    await runCommand(argv, { cwd: dir, env: { PATH: process.env.PATH ?? "" }, timeoutMs: 30_000 });
    plain.push(performance.now() - started);
    started = performance.now();
    const result = await sandbox.run(argv, {
      cwd: dir,
      writable: [dir],
      timeoutMs: 30_000,
      privateDir: dir,
    });
    contained.push(performance.now() - started);
    if (result.exitCode !== 0)
      throw new Error(`${argv.join(" ")} failed in the sandbox: ${result.stderr}`);
  }
  const p = median(plain);
  const c = median(contained);
  console.log(
    `| ${label} | ${p.toFixed(1)} ms | ${c.toFixed(1)} ms | ${(c - p).toFixed(1)} ms | ${(c / p).toFixed(2)}× | ${c - p < GOAL_MS ? "yes" : "NO"} |`,
  );
}

async function example(): Promise<Experiment> {
  const loaded = await loadManifest(join(EXAMPLE, "experiment.json"), {
    trialsOverride: 2,
    loadCatalog: loadHarnessCatalog,
  });
  if (!loaded.ok) throw new Error(loaded.problems.map((p) => p.message).join("; "));
  return loaded.experiment;
}

async function perTrial(experiment: Experiment, unsafe: boolean, dir: string): Promise<number> {
  const outDir = join(await mkdtemp(join(dir, "out-")), "run");
  const tempParent = await mkdtemp(join(dir, "trials-"));
  const started = performance.now();
  const { verdict } = await runExperiment(experiment, {
    outDir,
    manifestDocument: {},
    manifestHash: "0".repeat(64),
    executorFor: () => new ScriptedExecutor({ secretValues: [] }),
    tempParent,
    env: {},
    ...(unsafe ? { unsafeNoSandbox: true } : {}),
  });
  const elapsed = performance.now() - started;
  const broken = verdict.trials.filter((t) => t.outcome === "infrastructure_error");
  if (broken.length > 0) throw new Error(`a trial failed to run: ${broken[0]!.explanation}`);
  return elapsed / verdict.trials.length;
}

export async function run(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "hl-bench-sandbox-"));
  try {
    console.log(
      `\nOne command, plain vs in bubblewrap (prlimit + bwrap, every namespace, no capabilities); median of ${ROUNDS}, interleaved. Goal: overhead < ${GOAL_MS} ms.\n`,
    );
    console.log("| command | plain | sandboxed | overhead | ratio | under goal |");
    console.log("|---|---:|---:|---:|---:|---|");
    await commandOverhead("`true`", ["true"], dir);
    await commandOverhead("`node -e 0`", [process.execPath, "-e", "0"], dir);

    const experiment = await example();
    const unsafe: number[] = [];
    const contained: number[] = [];
    for (let round = 0; round < TRIAL_ROUNDS; round += 1) {
      unsafe.push(await perTrial(experiment, true, dir));
      contained.push(await perTrial(experiment, false, dir));
    }
    const u = median(unsafe);
    const c = median(contained);
    console.log(
      `\nOne trial of examples/fix-the-bug (scripted agents, graders scope + npm test in a fresh grading copy), runExperiment, median of ${TRIAL_ROUNDS} runs × ${experiment.variants.length * 2} trials:\n`,
    );
    console.log("| mode | per trial | ratio |");
    console.log("|---|---:|---:|");
    console.log(`| --unsafe-no-sandbox | ${u.toFixed(0)} ms | 1.00 |`);
    console.log(`| bubblewrap | ${c.toFixed(0)} ms | ${(c / u).toFixed(2)} |`);
    console.log(`\nSandbox overhead per trial: ${(c - u).toFixed(0)} ms.`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

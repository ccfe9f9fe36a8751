// Trials at repository scale: the harness's own time per trial (the whole trial minus the
// agent and the graders' commands) against the naive floor measured in the same run: `cp -r`
// of the fixture, `git init`, `git add -A`, `git commit`, `git diff`. Each trial is a run's: a
// copy made from the task's shared baseline, an agent that changes one file, the after
// snapshot, the patch, and grading on verified copies (a `scope` grader and 1 or 3 command
// graders that write a cache file into their copy in the sandbox). Printed per phase, so a regression shows where.
//
// Goal (issue 26): harness overhead <= 1.2 x the floor, with 1 and with 3 graders, on the
// example fixture, on 5,000 files / 50 MB, and (with `--huge`, minutes and 2 GB of disk) on
// 50,000 files / 500 MB.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { TaskSpec } from "../src/compare/index.js";
import { type GradingStep, gradePatch } from "../src/compare/trial/grade-patch.js";
import type { PreparedGrader } from "../src/compare/trial/graders.js";
import { createCommandGrader, createScopeGrader } from "../src/graders/index.js";
import {
  createBaselineArea,
  createTrialWorkspace,
  diffSnapshots,
  snapshotTree,
  type TreeSnapshot,
} from "../src/workspace/index.js";
import { testSandbox } from "../test/support/sandbox.js";
import { baselineTrial, largeFixture, median } from "./workspace.bench.js";

const GOAL = 1.2;
const EXAMPLE_FIXTURE = fileURLToPath(new URL("../examples/fix-the-bug/fixture/", import.meta.url));

/** The phases of a trial the harness pays for, in the order they run. */
const PHASES = [
  "trial copy",
  "snapshot",
  "patch",
  "grading copies",
  "apply",
  "reproduce",
  "put back",
  "cleanup",
] as const;
type Phase = (typeof PHASES)[number];

const STEP_PHASE: Record<GradingStep, Phase | null> = {
  copy: "grading copies",
  apply: "apply",
  reproduce: "reproduce",
  restore: "put back",
  grade: null,
  cleanup: "cleanup",
};

function graders(codeGraders: number): PreparedGrader[] {
  const prepared: PreparedGrader[] = [
    {
      id: "scope",
      kind: "scope",
      usesCopy: false,
      contractHash: null,
      grader: createScopeGrader({ mode: "subset" }),
    },
  ];
  for (let i = 1; i <= codeGraders; i++)
    prepared.push({
      id: `check-${i}`,
      kind: "command",
      usesCopy: true,
      contractHash: null,
      grader: createCommandGrader({
        id: `check-${i}`,
        // Writes into the copy, as a test run's caches do: the next grader must not see it.
        argv: ["sh", "-c", "mkdir -p .cache && echo ran > .cache/grader"],
        timeoutMs: 60_000,
        expectedExitCode: 0,
      }),
    });
  return prepared;
}

interface TrialTimes {
  phases: Record<Phase, number>;
  /** The agent's and the graders' own time, left out of the overhead. */
  excluded: number;
}

async function oneTrial(
  fixture: string,
  frozen: TreeSnapshot,
  baseline: Awaited<ReturnType<Awaited<ReturnType<typeof createBaselineArea>>["build"]>>,
  codeGraders: number,
  changedFile: string,
): Promise<TrialTimes> {
  const phases = Object.fromEntries(PHASES.map((p) => [p, 0])) as Record<Phase, number>;
  let excluded = 0;
  let mark = performance.now();
  const lap = (phase: Phase | null) => {
    const now = performance.now();
    if (phase === null) excluded += now - mark;
    else phases[phase] += now - mark;
    mark = now;
  };
  const workspace = await createTrialWorkspace(fixture, { baseline, expectedFixture: frozen });
  lap("trial copy");
  // The agent: one file changed.
  const path = join(workspace.root, changedFile);
  await writeFile(path, `${await readFile(path, "utf8")}\n// changed by the agent\n`);
  lap(null);
  // Whole, as a run takes it: the agent's code is not trusted to leave stat data honest.
  const after = await snapshotTree(workspace.root, { mode: "trial" });
  lap("snapshot");
  // As a run asks: git adds paths only when the snapshot shows new ones.
  const patch = await workspace.capturePatch({
    addsPaths: diffSnapshots(frozen, after).added.length > 0,
  });
  lap("patch");
  await workspace.cleanup();
  lap("cleanup");
  const sandbox = await testSandbox();
  const graded = await gradePatch({
    task: { id: "bench", fixtureDir: fixture, expectedFiles: [changedFile] } as unknown as TaskSpec,
    graders: graders(codeGraders),
    fixtureSnapshot: frozen,
    patch: patch.patchBytes,
    changedFiles: patch.changedFiles,
    finalText: "",
    sandbox,
    baseline,
    beforeCreate: async () => {},
    expectedTree: after,
    onStep: (step, ms) => {
      const phase = STEP_PHASE[step];
      if (phase === null) excluded += ms;
      else phases[phase] += ms;
    },
  });
  mark = performance.now();
  if (graded.harnessFailure !== undefined || !graded.grades.every((g) => g.passed))
    throw new Error(`grading failed: ${JSON.stringify(graded)}`);
  return { phases, excluded };
}

interface Row {
  name: string;
  graders: number;
  floor: number;
  overhead: number;
  phases: Record<Phase, number>;
  oneTimeBaseline: number;
}

async function measure(
  name: string,
  fixture: string,
  changedFile: string,
  repeats: number,
): Promise<Row[]> {
  const frozen = await snapshotTree(fixture);
  const area = await createBaselineArea();
  try {
    const builtAt = performance.now();
    const baseline = await area.build(fixture, frozen);
    const oneTimeBaseline = performance.now() - builtAt;
    const rows: Row[] = [];
    for (const codeGraders of [1, 3]) {
      const floors: number[] = [];
      const trials: TrialTimes[] = [];
      // Floor and harness alternate, so the machine's load falls on both alike.
      for (let i = 0; i < repeats; i++) {
        floors.push(await baselineTrial(fixture));
        trials.push(await oneTrial(fixture, frozen, baseline, codeGraders, changedFile));
      }
      const phases = Object.fromEntries(
        PHASES.map((p) => [p, median(trials.map((t) => t.phases[p]))]),
      ) as Record<Phase, number>;
      rows.push({
        name,
        graders: codeGraders,
        floor: median(floors),
        overhead: median(trials.map((t) => PHASES.reduce((sum, p) => sum + t.phases[p], 0))),
        phases,
        oneTimeBaseline,
      });
    }
    return rows;
  } finally {
    await area.dispose();
  }
}

export async function run(): Promise<void> {
  const huge = process.argv.includes("--huge");
  const dir = await mkdtemp(join(tmpdir(), "hl-bench-repo-scale-"));
  try {
    const rows = await measure("examples/fix-the-bug", EXAMPLE_FIXTURE, "src/index.js", 9);
    const large = join(dir, "large");
    await largeFixture(large, 5000, 50_000_000);
    rows.push(...(await measure("5,000 files / 50 MB", large, "pkg-000/src/module-0.js", 3)));
    await rm(large, { recursive: true, force: true });
    if (huge) {
      const hugeDir = join(dir, "huge");
      await largeFixture(hugeDir, 50_000, 500_000_000);
      rows.push(...(await measure("50,000 files / 500 MB", hugeDir, "pkg-000/src/module-0.js", 3)));
    }
    console.log(
      "| fixture | code graders | floor ms (cp -r + git init/add/commit/diff) | harness overhead ms | ratio | goal |",
    );
    console.log("|---|---:|---:|---:|---:|---|");
    for (const r of rows) {
      const ratio = r.overhead / r.floor;
      console.log(
        `| ${r.name} | ${r.graders} | ${r.floor.toFixed(0)} | ${r.overhead.toFixed(0)} | ${ratio.toFixed(2)} | ${ratio <= GOAL ? "ok" : "MISSED"} (<= ${GOAL}) |`,
      );
    }
    console.log("\nper phase (median ms per trial; the shared baseline is built once per run):");
    console.log(`| fixture | code graders | ${PHASES.join(" | ")} | baseline, once |`);
    console.log(`|---|---:|${PHASES.map(() => "---:").join("|")}|---:|`);
    for (const r of rows)
      console.log(
        `| ${r.name} | ${r.graders} | ${PHASES.map((p) => r.phases[p].toFixed(0)).join(" | ")} | ${r.oneTimeBaseline.toFixed(0)} |`,
      );
    if (!huge) console.log("\n(50,000 files / 500 MB: npm run bench -- repo-scale --huge)");
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

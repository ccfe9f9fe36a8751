// Two measurements of the workspace lifecycle, each against plain child processes doing the same
// work in the same run, so the machine's load affects both sides alike.
//
// Lifecycle: per-trial harness overhead with the `nop` agent, divided by `cp -r`, `git init`,
// `git add -A`, `git commit`, `git diff`. Goal: ratio <= 1.5 on a small and a 5,000-file / 50 MB
// fixture.
//
// Set-up (issue 13): making one trial's workspace, divided by the naive floor `cp -r` +
// `git init/add/commit`: a copy that commits the fixture itself (the old path) and one made from
// the run's shared baseline (the new path; building that baseline happens once per run and is
// reported apart). Goals: new <= 0.5 x floor for 5,000 files / 50 MB; for the example fixture the
// new path costs what the old one did (new / old about 1).
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { devNull, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ScriptedExecutor } from "../src/exec/index.js";
import { createToolPolicy } from "../src/policy/index.js";
import { minimalEnv, runCommand } from "../src/shared/index.js";
import {
  capturePatch,
  createBaselineArea,
  createTrialWorkspace,
  diffSnapshots,
  type SharedBaseline,
  snapshotTree,
  type TreeSnapshot,
} from "../src/workspace/index.js";
import { testSandbox } from "../test/support/sandbox.js";

const GOAL = 1.5;
const SETUP_GOAL = 0.5;
const EXAMPLE_FIXTURE = fileURLToPath(new URL("../examples/fix-the-bug/fixture/", import.meta.url));

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS =
  "const let function return export import from await async if else for while class new this value result error index items length push map filter".split(
    " ",
  );

/** Source-like text (compressible like real code), deterministic for a seed. */
function sourceText(random: () => number, bytes: number): string {
  let out = "";
  while (out.length < bytes) {
    const words = 4 + Math.floor(random() * 8);
    let line = "  ".repeat(Math.floor(random() * 4));
    for (let i = 0; i < words; i++)
      line += `${WORDS[Math.floor(random() * WORDS.length)]}${random() < 0.3 ? Math.floor(random() * 1000) : ""} `;
    out += `${line.trimEnd()};\n`;
  }
  return out.slice(0, bytes);
}

async function smallFixture(dir: string): Promise<void> {
  const files: Record<string, string> = {
    "package.json":
      '{\n  "name": "fix-the-bug",\n  "type": "module",\n  "scripts": { "test": "node --test" }\n}\n',
    "README.md": "# fix-the-bug\n\nA tiny package with a bug.\n",
    "src/index.js": 'export { add } from "./math.js";\nexport { slugify } from "./text.js";\n',
    "src/math.js": "export function add(a, b) {\n  return a - b;\n}\n",
    "src/text.js":
      "export function slugify(s) {\n  return s.toLowerCase().replace(/\\s+/g, '-');\n}\n",
    "test/math.test.js":
      'import { test } from "node:test";\nimport assert from "node:assert";\nimport { add } from "../src/math.js";\ntest("add", () => assert.equal(add(2, 2), 4));\n',
    "test/text.test.js":
      'import { test } from "node:test";\nimport assert from "node:assert";\nimport { slugify } from "../src/text.js";\ntest("slug", () => assert.equal(slugify("A b"), "a-b"));\n',
    ".gitignore": "node_modules/\n",
  };
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(dir, path, ".."), { recursive: true });
    await writeFile(join(dir, path), content);
  }
}

export async function largeFixture(
  dir: string,
  fileCount: number,
  totalBytes: number,
): Promise<void> {
  const random = mulberry32(20_240_601);
  const perFile = Math.floor(totalBytes / fileCount);
  const perDir = 100;
  for (let d = 0; d < fileCount / perDir; d++) {
    const sub = join(dir, `pkg-${String(d).padStart(3, "0")}`, "src");
    await mkdir(sub, { recursive: true });
    await Promise.all(
      Array.from({ length: perDir }, (_, f) =>
        writeFile(join(sub, `module-${f}.js`), sourceText(random, perFile)),
      ),
    );
  }
}

const gitEnv = minimalEnv({
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: devNull,
  // A commit of thousands of loose objects can start `git gc --auto` in the background, which
  // would then compete with the next measurement (and race the removal of its directory).
  GIT_CONFIG_COUNT: "1",
  GIT_CONFIG_KEY_0: "gc.auto",
  GIT_CONFIG_VALUE_0: "0",
  GIT_AUTHOR_NAME: "bench",
  GIT_AUTHOR_EMAIL: "bench@localhost",
  GIT_COMMITTER_NAME: "bench",
  GIT_COMMITTER_EMAIL: "bench@localhost",
});

async function must(argv: string[], cwd: string): Promise<void> {
  const result = await runCommand(argv, { cwd, env: gitEnv, timeoutMs: 600_000 });
  if (result.exitCode !== 0) throw new Error(`${argv.join(" ")} failed: ${result.stderr}`);
}

export async function baselineTrial(fixture: string): Promise<number> {
  const temp = await mkdtemp(join(tmpdir(), "hl-bench-base-"));
  const root = join(temp, "trial");
  const started = performance.now();
  await must(["cp", "-r", fixture, root], temp);
  await must(["git", "init", "-q"], root);
  await must(["git", "add", "-A"], root);
  await must(["git", "commit", "-q", "-m", "baseline"], root);
  await must(["git", "diff"], root);
  const elapsed = performance.now() - started;
  await rm(temp, { recursive: true, force: true });
  return elapsed;
}

interface Phases {
  create: number;
  exec: number;
  snapshot: number;
  patch: number;
  cleanup: number;
}

async function harnessTrial(
  fixture: string,
  fixtureSnapshot: TreeSnapshot,
  phases: Phases,
  baseline?: SharedBaseline,
): Promise<number> {
  const started = performance.now();
  let mark = started;
  const lap = (phase: keyof Phases) => {
    const now = performance.now();
    phases[phase] += now - mark;
    mark = now;
  };
  const workspace = await createTrialWorkspace(
    fixture,
    baseline ? { baseline, expectedFixture: fixtureSnapshot } : {},
  );
  lap("create");
  const policy = createToolPolicy({
    trialRoot: workspace.root,
    allowedWrites: ["src/math.js"],
    allowedCommands: [["npm", "test"]],
    tools: ["Read", "Write", "Edit", "Bash"],
  });
  const receipt = await new ScriptedExecutor().run({
    prompt: "fix the bug",
    preamble: "",
    cwd: workspace.root,
    policy,
    timeoutMs: 60_000,
    scratchDir: workspace.scratchDir,
    sandbox: await testSandbox(),
    runtime: { tools: ["Read", "Write", "Edit", "Bash"], allowedTools: [], disallowedTools: [] },
    agent: "nop",
    trialIndex: 1,
    variant: "baseline",
    task: "bench",
  });
  if (receipt.status !== "completed") throw new Error(`nop run failed: ${receipt.error}`);
  lap("exec");
  const after = await snapshotTree(workspace.root, { mode: "trial" });
  const changes = diffSnapshots(fixtureSnapshot, after);
  if (changes.added.length + changes.modified.length + changes.deleted.length > 0)
    throw new Error("nop changed files");
  lap("snapshot");
  // From a shared baseline as a run captures it (the shared packs checked after).
  const patch = baseline
    ? await workspace.capturePatch()
    : await capturePatch(workspace.root, { tempDir: workspace.scratchDir });
  if (patch.changedFiles.length > 0) throw new Error("nop produced a patch");
  lap("patch");
  await workspace.cleanup();
  lap("cleanup");
  return performance.now() - started;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

async function measure(name: string, fixture: string, iterations: number) {
  const fixtureSnapshot = await snapshotTree(fixture);
  const bytes = fixtureSnapshot.files.reduce((sum, f) => sum + f.bytes, 0);
  const files = fixtureSnapshot.files.filter((f) => f.kind === "file").length;
  const phases: Phases = { create: 0, exec: 0, snapshot: 0, patch: 0, cleanup: 0 };
  const sharedPhases: Phases = { ...phases };
  const area = await createBaselineArea();
  try {
    const shared = await area.build(fixture, fixtureSnapshot);
    // Warm every path (page cache, git binary, module loading) before timing.
    await baselineTrial(fixture);
    await harnessTrial(fixture, fixtureSnapshot, { ...phases });
    await harnessTrial(fixture, fixtureSnapshot, { ...phases }, shared);
    const baseline: number[] = [];
    const harness: number[] = [];
    const sharedHarness: number[] = [];
    for (let i = 0; i < iterations; i++) {
      // Interleaved so drift in the machine's load affects every side alike.
      baseline.push(await baselineTrial(fixture));
      harness.push(await harnessTrial(fixture, fixtureSnapshot, phases));
      sharedHarness.push(await harnessTrial(fixture, fixtureSnapshot, sharedPhases, shared));
    }
    const b = median(baseline);
    const h = median(harness);
    const hs = median(sharedHarness);
    const mean = (p: Phases) =>
      Object.fromEntries(Object.entries(p).map(([k, v]) => [k, Math.round(v / iterations)]));
    return {
      name,
      files,
      mb: bytes / 1e6,
      baseline: b,
      harness: h,
      ratio: h / b,
      shared: hs,
      sharedRatio: hs / b,
      perPhase: mean(phases),
      sharedPerPhase: mean(sharedPhases),
    };
  } finally {
    await area.dispose();
  }
}

/** The naive floor of a trial's set-up: a plain copy and one commit of it, nothing checked. */
async function floorSetup(fixture: string): Promise<number> {
  const temp = await mkdtemp(join(tmpdir(), "hl-bench-floor-"));
  const root = join(temp, "trial");
  const started = performance.now();
  await must(["cp", "-r", fixture, root], temp);
  await must(["git", "init", "-q"], root);
  await must(["git", "add", "-A"], root);
  await must(["git", "commit", "-q", "-m", "baseline"], root);
  const elapsed = performance.now() - started;
  await rm(temp, { recursive: true, force: true });
  return elapsed;
}

/** One workspace as a run makes it (checked against the frozen fixture); its removal is not timed. */
async function harnessSetup(
  fixture: string,
  frozen: TreeSnapshot,
  baseline: SharedBaseline | undefined,
): Promise<number> {
  const started = performance.now();
  const workspace = await createTrialWorkspace(fixture, {
    expectedFixture: frozen,
    ...(baseline ? { baseline } : {}),
  });
  const elapsed = performance.now() - started;
  await workspace.cleanup();
  return elapsed;
}

interface SetupRow {
  name: string;
  files: number;
  mb: number;
  build: number;
  floor: number;
  old: number;
  shared: number;
  /** Medians of the per-round ratios. */
  oldRatio: number;
  sharedRatio: number;
  sharedVsOld: number;
}

/**
 * Rounds of floor, old and new set-up, in an order that turns each round, so none of them always
 * follows another's writing. Each harness sample is divided by the floor of its own round.
 */
async function measureSetup(name: string, fixture: string, rounds: number): Promise<SetupRow> {
  const frozen = await snapshotTree(fixture);
  const area = await createBaselineArea();
  try {
    const started = performance.now();
    const baseline = await area.build(fixture, frozen);
    const build = performance.now() - started;
    // Warm the page cache, git and module loading on every side before timing.
    await floorSetup(fixture);
    await harnessSetup(fixture, frozen, undefined);
    await harnessSetup(fixture, frozen, baseline);
    const samples = { floor: [] as number[], old: [] as number[], shared: [] as number[] };
    const ratios = { old: [] as number[], shared: [] as number[], sharedVsOld: [] as number[] };
    const steps = [
      async () => samples.floor.push(await floorSetup(fixture)),
      async () => samples.old.push(await harnessSetup(fixture, frozen, undefined)),
      async () => samples.shared.push(await harnessSetup(fixture, frozen, baseline)),
    ];
    for (let round = 0; round < rounds; round++) {
      for (let step = 0; step < steps.length; step++) await steps[(round + step) % steps.length]!();
      const [floor, old, shared] = [samples.floor, samples.old, samples.shared].map(
        (s) => s.at(-1)!,
      );
      ratios.old.push(old! / floor!);
      ratios.shared.push(shared! / floor!);
      ratios.sharedVsOld.push(shared! / old!);
    }
    return {
      name,
      files: frozen.files.filter((f) => f.kind === "file").length,
      mb: frozen.files.reduce((sum, f) => sum + f.bytes, 0) / 1e6,
      build,
      floor: median(samples.floor),
      old: median(samples.old),
      shared: median(samples.shared),
      oldRatio: median(ratios.old),
      sharedRatio: median(ratios.shared),
      sharedVsOld: median(ratios.sharedVsOld),
    };
  } finally {
    await area.dispose();
  }
}

function printSetup(rows: SetupRow[]): void {
  console.log("\nper-trial set-up (createTrialWorkspace, checked against the frozen fixture):");
  console.log(
    "| fixture | files | MB | floor ms (cp -r + git init/add/commit) | old ms (own commit) | new ms (shared baseline) | old / floor | new / floor | new / old | one-time baseline ms |",
  );
  console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
  for (const r of rows)
    console.log(
      `| ${r.name} | ${r.files} | ${r.mb.toFixed(1)} | ${r.floor.toFixed(1)} | ${r.old.toFixed(1)} | ${r.shared.toFixed(1)} | ${r.oldRatio.toFixed(2)} | ${r.sharedRatio.toFixed(2)} | ${r.sharedVsOld.toFixed(2)} | ${r.build.toFixed(1)} |`,
    );
  const [small, large] = rows;
  if (large)
    console.log(
      `goal, ${large.name}: new / floor <= ${SETUP_GOAL}: ${large.sharedRatio <= SETUP_GOAL ? "ok" : "MISSED"} (${large.sharedRatio.toFixed(2)})`,
    );
  if (small)
    console.log(
      `goal, ${small.name}: new / old about 1, not more: ${small.sharedVsOld <= 1.1 ? "ok" : "MISSED"} (${small.sharedVsOld.toFixed(2)})`,
    );
}

export async function run(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "hl-bench-fixtures-"));
  try {
    const small = join(dir, "small");
    const large = join(dir, "large");
    await smallFixture(small);
    await largeFixture(large, 5000, 50_000_000);
    // The small fixtures first: writing back the large one would otherwise disturb their timings.
    const setup = [await measureSetup("examples/fix-the-bug", EXAMPLE_FIXTURE, 15)];
    const rows = [await measure("small (example-like)", small, 15)];
    setup.push(await measureSetup("5,000 files / 50 MB", large, 5));
    rows.push(await measure("5,000 files / 50 MB", large, 3));
    console.log(
      "| fixture | files | MB | baseline ms (cp -r + git init/add/commit/diff) | harness ms (nop trial lifecycle, own commit) | ratio | harness ms (shared baseline) | ratio | goal |",
    );
    console.log("|---|---:|---:|---:|---:|---:|---:|---:|---|");
    for (const r of rows) {
      const verdict = (ratio: number) => (ratio <= GOAL ? "ok" : "MISSED");
      console.log(
        `| ${r.name} | ${r.files} | ${r.mb.toFixed(1)} | ${r.baseline.toFixed(1)} | ${r.harness.toFixed(1)} | ${r.ratio.toFixed(2)} | ${r.shared.toFixed(1)} | ${r.sharedRatio.toFixed(2)} | ${verdict(r.ratio)} / ${verdict(r.sharedRatio)} (<= ${GOAL}) |`,
      );
    }
    console.log("\nharness phases (mean ms per trial):");
    for (const r of rows) {
      console.log(`  ${r.name}, own commit: ${JSON.stringify(r.perPhase)}`);
      console.log(`  ${r.name}, shared baseline: ${JSON.stringify(r.sharedPerPhase)}`);
    }
    printSetup(setup);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

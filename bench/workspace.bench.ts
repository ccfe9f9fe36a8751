// Per-trial harness overhead of the workspace lifecycle with the `nop` agent, divided by a baseline
// of the same work done by plain child processes in the same run: `cp -r`, `git init`,
// `git add -A`, `git commit`, `git diff`. Goal: ratio <= 1.5 on a small and a 5,000-file / 50 MB fixture.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { devNull, tmpdir } from "node:os";
import { join } from "node:path";
import { ScriptedExecutor } from "../src/exec/index.js";
import { createToolPolicy } from "../src/policy/index.js";
import { minimalEnv, runCommand } from "../src/shared/index.js";
import {
  capturePatch,
  createTrialWorkspace,
  diffSnapshots,
  snapshotTree,
  type TreeSnapshot,
} from "../src/workspace/index.js";
import { testSandbox } from "../test/support/sandbox.js";

const GOAL = 1.5;

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
): Promise<number> {
  const started = performance.now();
  let mark = started;
  const lap = (phase: keyof Phases) => {
    const now = performance.now();
    phases[phase] += now - mark;
    mark = now;
  };
  const workspace = await createTrialWorkspace(fixture);
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
  const patch = await capturePatch(workspace.root, { tempDir: workspace.scratchDir });
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
  // Warm both paths (page cache, git binary, module loading) before timing.
  await baselineTrial(fixture);
  await harnessTrial(fixture, fixtureSnapshot, { ...phases });
  const baseline: number[] = [];
  const harness: number[] = [];
  for (let i = 0; i < iterations; i++) {
    // Interleaved so drift in the machine's load affects both sides alike.
    baseline.push(await baselineTrial(fixture));
    harness.push(await harnessTrial(fixture, fixtureSnapshot, phases));
  }
  const b = median(baseline);
  const h = median(harness);
  const perPhase = Object.fromEntries(
    Object.entries(phases).map(([k, v]) => [k, Math.round(v / iterations)]),
  );
  return { name, files, mb: bytes / 1e6, baseline: b, harness: h, ratio: h / b, perPhase };
}

export async function run(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "hl-bench-fixtures-"));
  try {
    const small = join(dir, "small");
    const large = join(dir, "large");
    await smallFixture(small);
    await largeFixture(large, 5000, 50_000_000);
    const rows = [
      await measure("small (example-like)", small, 15),
      await measure("5,000 files / 50 MB", large, 3),
    ];
    console.log(
      "| fixture | files | MB | baseline ms (cp -r + git init/add/commit/diff) | harness ms (nop trial lifecycle) | ratio | goal |",
    );
    console.log("|---|---:|---:|---:|---:|---:|---|");
    for (const r of rows) {
      console.log(
        `| ${r.name} | ${r.files} | ${r.mb.toFixed(1)} | ${r.baseline.toFixed(1)} | ${r.harness.toFixed(1)} | ${r.ratio.toFixed(2)} | ${r.ratio <= GOAL ? "ok" : "MISSED"} (<= ${GOAL}) |`,
      );
    }
    console.log("\nharness phases (mean ms per trial):");
    for (const r of rows) console.log(`  ${r.name}: ${JSON.stringify(r.perPhase)}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

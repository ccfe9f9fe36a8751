// Helpers for runner, CLI and report tests: small real experiments (manifest, .harness,
// fixture, prompt, scripted agents) written into a fresh temporary directory, plus ways to
// load, run and inspect them. Everything lives under one temp root that `cleanup` removes.
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type Experiment,
  loadHarnessCatalog,
  loadManifest,
  type ManifestDocument,
  type RunExperimentOptions,
  type RunExperimentResult,
  runExperiment,
} from "../../src/compare/index.js";
import { type Executor, ScriptedExecutor } from "../../src/exec/index.js";

/** The offline example of the repository (read-only for tests: copy it before changing it). */
export const EXAMPLE_DIR = fileURLToPath(new URL("../../examples/fix-the-bug/", import.meta.url));
/** Adversarial and helper scripted agents (test/fixtures/agents). */
const AGENTS_DIR = fileURLToPath(new URL("../fixtures/agents/", import.meta.url));

/**
 * Two compositions for the scripted host and two for claude-code, so a synthetic experiment can
 * compare variants on either (a fake SDK executor stands in for claude-code).
 */
const SYNTHETIC_HARNESS = `// Compositions for the runner tests.
component loop {
  kind workflow
  description "Make the change the task asks for and report it."
  permissions { workspace read workspace write network deny }
}
component careful {
  kind workflow
  description "Run the check before finishing."
  permissions { process allow network deny }
}
binding loop for scripted { mechanism prompt-preamble strength advisory }
binding careful for scripted { mechanism prompt-preamble strength advisory }
binding loop for claude-code { mechanism prompt-preamble strength advisory }
binding careful for claude-code { mechanism prompt-preamble strength advisory }
// Including a plugin enables all it provides: each component has a plugin of its own, so the
// compositions give the agent different components (plain: loop; careful: loop and careful;
// extra: careful), as harnesslab requires of the variants it compares.
plugin core {
  version "1.0.0"
  provides [ component.loop ]
}
plugin checks {
  version "1.0.0"
  provides [ component.careful ]
}
composition plain {
  target scripted
  include [ plugin.core@^1 ]
  require loop { minimum advisory }
}
composition careful {
  target scripted
  include [ plugin.core@^1, plugin.checks@^1 ]
  require loop { minimum advisory }
  require careful { minimum advisory }
}
composition extra {
  target scripted
  include [ plugin.checks@^1 ]
  require careful { minimum advisory }
}
composition plain-claude {
  target claude-code
  include [ plugin.core@^1 ]
  require loop { minimum advisory }
}
composition careful-claude {
  target claude-code
  include [ plugin.core@^1, plugin.checks@^1 ]
  require loop { minimum advisory }
  require careful { minimum advisory }
}
composition extra-claude {
  target claude-code
  include [ plugin.checks@^1 ]
  require careful { minimum advisory }
}
`;

/**
 * The synthetic fixture: `src/value.txt` holds "old"; `node check.mjs` passes once it holds
 * "fixed", `node check-old.mjs` passes while it still holds "old" (for re-grading), and
 * `node env.mjs` prints the process environment and working directory (for leak tests).
 */
export const SYNTHETIC_FIXTURE: Record<string, string> = {
  "src/value.txt": "old\n",
  "check.mjs":
    'import { readFileSync } from "node:fs";\nconst value = readFileSync("src/value.txt", "utf8");\nif (value !== "fixed\\n") { console.error("value is " + JSON.stringify(value)); process.exit(1); }\nconsole.log("ok");\n',
  "check-old.mjs":
    'import { readFileSync } from "node:fs";\nprocess.exit(readFileSync("src/value.txt", "utf8") === "old\\n" ? 0 : 1);\n',
  "env.mjs": "console.log(JSON.stringify({ cwd: process.cwd(), env: process.env }));\n",
  "README.md": "# synthetic fixture\n",
};

/** The source of an agent module of test/fixtures/agents (to copy into an experiment). */
export function fixtureAgent(name: string): Promise<string> {
  return readFile(join(AGENTS_DIR, name), "utf8");
}

/** A scripted agent that makes the check pass. */
const FIXER_AGENT = `export default async function fixer({ tools }) {
  const write = await tools.write("src/value.txt", "fixed\\n");
  if (!write.ok) return "could not fix it, the write was refused: " + (write.reason ?? write.error);
  return "fixed src/value.txt";
}
`;

/** A valid scripted v2 manifest: nop baseline vs a fixer, 2 trials each, cheap graders. */
export function syntheticManifest(
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    schemaVersion: "harness-compare.v2",
    harness: "./compare.harness",
    tasks: [
      {
        id: "fix-value",
        fixture: "./fixture",
        prompt: "./prompt.md",
        expectedFiles: ["src/value.txt"],
        graders: [
          { kind: "scope", mode: "subset" },
          { kind: "command", id: "check", argv: ["node", "check.mjs"], timeoutMs: 30000 },
        ],
      },
    ],
    variants: [
      { id: "baseline", composition: "plain", agent: "nop" },
      { id: "fixer", composition: "careful", agent: "./agents/fixer.mjs" },
    ],
    baseline: "baseline",
    runtime: {
      host: "scripted",
      timeoutMs: 30000,
      validationCommands: [
        ["node", "check.mjs"],
        ["node", "env.mjs"],
      ],
    },
    trials: { count: 2, seed: 7, order: "randomized" },
    // Two trials a side are too few for the exact test to decide anything at 0.05 (all passes
    // against all failures needs 4 a side); these runs test the runner, so they decide at 0.5.
    verdict: { policy: "paired-v1", alpha: 0.5, minTrials: 2, maxCostRatio: 1.25 },
    concurrency: 2,
    ...overrides,
  };
}

export interface TempExperiment {
  /** The temp root; everything below is removed by `cleanup`. */
  base: string;
  /** The manifest directory (`base/exp`). */
  dir: string;
  manifestPath: string;
  fixtureDir: string;
  /** Parent for the trials' temporary directories (`tempParent`), `base/trials`. */
  trialsDir: string;
  /** A fresh, absent output directory (`base/out`). */
  outDir: string;
  /** Another absent directory name under base, for a second run. */
  freshOut(name: string): string;
  writeManifest(manifest: unknown, name?: string): Promise<string>;
  /** Writes `agents/<name>` and returns its manifest path `./agents/<name>`. */
  writeAgent(name: string, source: string): Promise<string>;
  cleanup(): Promise<void>;
}

export interface MakeExperimentOptions {
  fixture?: Record<string, string>;
  prompt?: string;
  harness?: string;
  /** File name under `agents/` → module source. `fixer.mjs` is always written. */
  agents?: Record<string, string>;
  manifest?: unknown;
}

async function writeFiles(root: string, files: Record<string, string>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), content);
  }
}

function tempExperiment(base: string, dir: string, manifestPath: string): TempExperiment {
  const trialsDir = join(base, "trials");
  return {
    base,
    dir,
    manifestPath,
    fixtureDir: join(dir, "fixture"),
    trialsDir,
    outDir: join(base, "out"),
    freshOut: (name) => join(base, name),
    async writeManifest(manifest, name = "experiment.json") {
      const path = join(dir, name);
      await writeFile(path, `${JSON.stringify(manifest, null, 2)}\n`);
      return path;
    },
    async writeAgent(name, source) {
      await writeFiles(join(dir, "agents"), { [name]: source });
      return `./agents/${name}`;
    },
    cleanup: () => rm(base, { recursive: true, force: true }),
  };
}

/** A synthetic experiment in a fresh temp dir: `base/exp/{experiment.json, compare.harness, prompt.md, fixture/, agents/}`. */
export async function makeExperiment(options: MakeExperimentOptions = {}): Promise<TempExperiment> {
  const base = await mkdtemp(join(tmpdir(), "hl-run-"));
  const dir = join(base, "exp");
  await writeFiles(join(dir, "fixture"), options.fixture ?? SYNTHETIC_FIXTURE);
  await writeFiles(dir, {
    "compare.harness": options.harness ?? SYNTHETIC_HARNESS,
    "prompt.md": options.prompt ?? "Make `node check.mjs` pass by changing src/value.txt only.\n",
  });
  await writeFiles(join(dir, "agents"), { "fixer.mjs": FIXER_AGENT, ...options.agents });
  await mkdir(join(base, "trials"));
  const experiment = tempExperiment(base, dir, join(dir, "experiment.json"));
  await experiment.writeManifest(options.manifest ?? syntheticManifest());
  return experiment;
}

export interface LoadedForRun {
  experiment: Experiment;
  manifest: ManifestDocument;
  manifestHash: string;
}

/** Loads a manifest as `compare run` does (compositions checked); throws listing every problem. */
export async function loadForRun(
  manifestPath: string,
  trialsOverride?: number,
): Promise<LoadedForRun> {
  const loaded = await loadManifest(manifestPath, {
    ...(trialsOverride === undefined ? {} : { trialsOverride }),
    loadCatalog: loadHarnessCatalog,
  });
  if (!loaded.ok)
    throw new Error(
      `${manifestPath}: ${loaded.problems.map((p) => `${p.path}: ${p.message}`).join("; ")}`,
    );
  return {
    experiment: loaded.experiment,
    manifest: loaded.manifest,
    manifestHash: loaded.manifestHash,
  };
}

export type RunOptions = Omit<
  RunExperimentOptions,
  "manifestDocument" | "manifestHash" | "executorFor"
> & {
  executorFor?: RunExperimentOptions["executorFor"];
  trials?: number;
};

/** Loads and runs a manifest with the scripted executor (unless `executorFor` says otherwise). */
export async function runManifest(
  manifestPath: string,
  options: RunOptions,
): Promise<RunExperimentResult & LoadedForRun> {
  const { trials, executorFor, ...rest } = options;
  const loaded = await loadForRun(manifestPath, trials);
  const result = await runExperiment(loaded.experiment, {
    ...rest,
    manifestDocument: loaded.manifest,
    manifestHash: loaded.manifestHash,
    executorFor: executorFor ?? (() => new ScriptedExecutor()),
  });
  return { ...result, ...loaded };
}

/** Wraps an executor to record every run's (variant, task, trial) in call order. */
export function recordingExecutor(inner: Executor, log: string[]): Executor {
  return {
    host: inner.host,
    run(input) {
      log.push(`${input.variant}/${input.task}/${input.trialIndex}`);
      return inner.run(input);
    },
  };
}

/** Every file under `root` (recursively), as sorted `/`-separated relative paths. */
export async function listFiles(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => !e.isDirectory())
    .map((e) => relative(root, join(e.parentPath, e.name)).split(sep).join("/"))
    .sort();
}

/** The parsed JSON file at `root/path`. */
export async function readJson(root: string, path: string): Promise<unknown> {
  return JSON.parse(await readFile(join(root, path), "utf8")) as unknown;
}

/** The files under `root` whose bytes contain `needle`. */
export async function filesContaining(root: string, needle: string): Promise<string[]> {
  const hits: string[] = [];
  for (const path of await listFiles(root)) {
    const bytes = await readFile(join(root, path));
    if (bytes.includes(needle)) hits.push(path);
  }
  return hits;
}

/** The nine files every trial folder holds (docs/artifacts.md), and the tool-use transcript. */
export const TRIAL_FILES = [
  "metrics.json",
  "patch.diff",
  "permission-decisions.json",
  "prompt.txt",
  "response.txt",
  "runtime-receipt.json",
  "stderr.txt",
  "tool-use.json",
  "trace.jsonl",
  "validation.json",
] as const;

/** The files at the top of --out (docs/artifacts.md). */
export const RUN_FILES = [
  "frozen-task.json",
  "manifest.json",
  "verdict.html",
  "verdict.json",
  "verdict.md",
] as const;

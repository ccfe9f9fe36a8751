// The experiment model: what every manifest version becomes once loaded and checked.
// The runner, planner and reports only ever see this shape, never a manifest document.
import type { HostId } from "../hosts/index.js";
import type { IntendedChange, RepoState, RequiredFact } from "../scoring/index.js";
import type { VerdictPolicy } from "../stats/index.js";

/** Agent runtimes, in the order manifests and messages list them. */
export const HOSTS = [
  "qoder",
  "claude-code",
  "codex",
  "pi",
  "scripted",
] as const satisfies readonly HostId[];
export type { HostId };

type RealHostId = Exclude<HostId, "scripted">;

/** The file tools a bounded coding run may expose (docs/manifest.md). */
export const CODING_TOOLS = ["Read", "Glob", "Grep", "Edit", "Write", "Bash"] as const;
type CodingTool = (typeof CODING_TOOLS)[number];

type ManifestSchemaVersion = "harness-compare.v1" | "harness-compare.v2";

/** How a task's outcome is graded. Every grader has an id unique within its task. */
export type GraderSpec =
  | {
      kind: "scope";
      id: "scope";
      /** `subset`: changed files ⊆ expected files; `exact`: changed files = expected files. */
      mode: "subset" | "exact";
    }
  | {
      kind: "command";
      id: string;
      /** Run without a shell, cwd = the trial root. */
      argv: string[];
      timeoutMs: number;
      expectedExitCode: number;
    }
  | {
      kind: "tests";
      id: string;
      runner: "node" | "vitest" | "junit";
      /** Relative to the trial root. */
      files: string[];
      /** Absolute paths of hidden test files (kept out of the fixture). */
      hidden: string[];
      argv?: string[];
      failToPass: string[];
      passToPass: string[];
      minTests?: number;
      timeoutMs: number;
    }
  | {
      kind: "readme-package-v1";
      id: "readme-package-v1";
      /** Absolute path of the grader contract (docs/graders.md). */
      contractFile: string;
    }
  | {
      kind: "forge-state";
      id: "forge-state";
      /** The whole expected end state: the seed with the intended changes, or the given file. */
      expected: RepoState;
      /** Where it came from, as the manifest says (absolute path of a file, or the changes). */
      source: { changes: IntendedChange[] } | { file: string };
    }
  | {
      kind: "read-facts";
      id: "read-facts";
      facts: RequiredFact[];
    };

/**
 * How a variant's agent reaches a forge task's repository (its composition's `forge.access`):
 * harnesslab's forge MCP server, `forge.commands` against the forge's API, or a component of the
 * variant's own setup (`forge.tool`).
 */
export type ForgeAccess = "mcp" | "cli" | "tool";
export const FORGE_ACCESS_VALUES = ["mcp", "cli", "tool"] as const satisfies readonly ForgeAccess[];
/** The composition setting that chooses it; absent means `mcp` (or `tool` when `forge.tool` is set). */
export const FORGE_ACCESS_SETTING = "forge.access";
/** The composition setting naming the component that is the agent's forge tool. */
export const FORGE_TOOL_SETTING = "forge.tool";
/** The composition setting that makes the forge tool the agent's only tool. */
export const FORGE_ONLY_SETTING = "forge.only";

/** A variant's arm: how its agent reaches a forge task's repository, from its composition. */
export interface ForgeArm {
  access: ForgeAccess;
  /** `tool`: the setup's component the agent reaches the forge with. */
  tool?: { component: string; kind: "mcp-server" | "cli" };
  /**
   * `forge.only = true`: the arm is the agent's one tool. An MCP arm gets no shell and no file
   * tools; a command arm's shell runs only its programs.
   */
  only: boolean;
}

/** A forge task's repository: seeded for every trial. */
export interface ForgeTaskSpec {
  /** Absolute path of the seed file. */
  seedFile: string;
  /** The seed, validated. */
  seed: RepoState;
  /** owner/name on the local forge (live mode makes a throwaway repository instead). */
  repo: string;
}

/** Where an experiment's forge tasks run. */
export type ForgeSettings =
  | {
      kind: "local";
      /** Who the agent acts as. */
      user: string;
      /** Who opened the seeded issues and pull requests. */
      author: string;
      /** Programs a `cli` agent may run with any arguments. */
      commands: string[];
    }
  | {
      kind: "gitea";
      /** The instance root. */
      url: string;
      tokenEnv: string;
      owner: string;
      user: string;
      /** Who opens the seeded issues and pull requests. */
      author: string;
      commands: string[];
    };

export interface TaskSpec {
  /** Kebab-case id; `task` for a v1 manifest. */
  id: string;
  /** Absolute path of the frozen fixture directory (never modified). */
  fixtureDir: string;
  /** Absolute path of the prompt file. */
  promptFile: string;
  /** The prompt text, read once at load time. */
  prompt: string;
  /** The allowed change surface: normalized POSIX paths relative to the trial root, sorted. */
  expectedFiles: string[];
  graders: GraderSpec[];
  /** Where the task sits in the manifest (`task`, `tasks[2]`), for error messages. */
  manifestField: string;
  /** Set for a forge task: the agent works on a seeded repository. */
  forge?: ForgeTaskSpec;
  /** The tier the reports group the task in, when the manifest gives one. */
  tier?: string;
}

/** The scripted host's agent for one variant. */
export type AgentSpec =
  | { kind: "nop" }
  /** Applies a patch file: proves a task is solvable. */
  | { kind: "oracle"; patchFile: string }
  /** An ES module whose default export is `async (ctx) => string`. */
  | { kind: "module"; modulePath: string };

export interface VariantSpec {
  /** Directory-safe id: `H0`/`H1` for v1, the manifest's id for v2. */
  id: string;
  /** Human label: `baseline`/`candidate` for v1, the id for v2. */
  label: string;
  /** Composition id inside the variant's harness files. */
  composition: string;
  /**
   * Absolute paths of the `.harness` files the variant's composition is in, when not the
   * experiment's (`variants[i].harness`: another version of the setup). Read with `harnessFilesOf`.
   */
  harnessFiles?: string[];
  /** Named runtime profile; absent means the host's default profile. */
  runtimeProfile?: string;
  /** Scripted host only. */
  agent?: AgentSpec;
  isBaseline: boolean;
  /** JSON path of the field naming the composition (`variants.baseline`, `variants[1].composition`). */
  compositionField: string;
  /** Where the variant sits in the manifest: `variants.baseline`, `variants[1]`, `matrix[opus_plain]`. */
  manifestField: string;
  /**
   * The variant's runtime when the manifest sets any of its runtime fields (host, model,
   * maxTurns, timeoutMs, permissionMode); absent: the experiment's. Read it with `runtimeOf`.
   */
  runtime?: RuntimeSpec;
}

/** Runtime settings for a real agent host, enforced around every trial. */
interface RealHostRuntime {
  host: RealHostId;
  model?: string;
  tools: CodingTool[];
  /** Always empty: nothing is auto-approved, every call goes through the permission callback. */
  allowedTools: string[];
  disallowedTools: string[];
  permissionMode: "default";
  maxTurns: number;
  timeoutMs: number;
  network: "deny";
  enableFileCheckpointing: boolean;
  /** The only Bash commands the permission policy allows, as argv arrays. */
  validationCommands: string[][];
}

/** Runtime settings for the offline scripted host. */
interface ScriptedRuntime {
  host: "scripted";
  timeoutMs: number;
  network: "deny";
  validationCommands: string[][];
}

export type RuntimeSpec = RealHostRuntime | ScriptedRuntime;

export interface TrialsSpec {
  /** Trials per task × variant for this run (after `--trials`). */
  count: number;
  /** The count the manifest asked for. */
  manifestCount: number;
  /** uint32 seed of the shuffle. */
  seed: number;
  order: "randomized" | "sequential";
}

/** The verdict policy, in the form the stats stage consumes. */
export type { VerdictPolicy } from "../stats/index.js";

export interface Experiment {
  schemaVersion: ManifestSchemaVersion;
  /** `v1`: variants H0/H1, one task, artifacts at `H0/trial-001`; `v2`: `<variant>/<task>/trial-001`. */
  layout: "v1" | "v2";
  /** Absolute path of the manifest file. */
  manifestPath: string;
  /** Absolute directory every manifest path is relative to. */
  manifestDir: string;
  /** Absolute paths of the `.harness` files, in manifest order. */
  harnessFiles: string[];
  tasks: TaskSpec[];
  /** In manifest order (v1: H0 then H1). */
  variants: VariantSpec[];
  /** Id of the baseline variant. */
  baseline: string;
  runtime: RuntimeSpec;
  trials: TrialsSpec;
  verdict: VerdictPolicy;
  /** Trials run at once (1..16). */
  concurrency: number;
  /** The most bytes one trial's workspace, and each of its grading copies, may take on disk. */
  diskBudgetBytes: number;
  /** Where forge tasks run; set when the experiment has a forge task. */
  forge?: ForgeSettings;
  /** Set for an A/A run (`compare run --calibrate`): the baseline and the id of its copy. */
  calibration?: { variant: string; copy: string };
}

/** The `.harness` files a variant's composition is compiled from. */
export function harnessFilesOf(experiment: Experiment, variant: VariantSpec): string[] {
  return variant.harnessFiles ?? experiment.harnessFiles;
}

/** One trial to run: a task × variant × trial index, at position `seq` of the execution order. */
export interface TrialJob {
  /** 1-based position in the execution order. */
  seq: number;
  task: string;
  variant: string;
  /** 1-based. */
  trialIndex: number;
}

/** The runtime a variant's trials run with: its own, or the experiment's. */
export function runtimeOf(
  experiment: Pick<Experiment, "runtime" | "variants">,
  variant: VariantSpec | string,
): RuntimeSpec {
  const spec =
    typeof variant === "string" ? experiment.variants.find((v) => v.id === variant) : variant;
  if (spec === undefined) throw new Error(`no variant ${JSON.stringify(variant)}`);
  return spec.runtime ?? experiment.runtime;
}

/** The hosts an experiment's variants run on, each once, in variant order. */
export function hostsOf(experiment: Pick<Experiment, "runtime" | "variants">): HostId[] {
  return [...new Set(experiment.variants.map((variant) => runtimeOf(experiment, variant).host))];
}

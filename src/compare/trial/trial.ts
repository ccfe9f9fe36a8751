// Doing one trial (I/O): fresh copy → git baseline → executor under the policy → patch →
// graders → artifacts → cleanup. Every failure of a harness step becomes this trial's
// infrastructure error with its evidence; nothing here throws past `runTrial`.
import { mkdir, realpath, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import {
  type SetupDocument,
  TOOL_USE_VERSION,
  type ToolUseCounts,
  type ToolUseDocument,
  TRIAL_METRICS_VERSION,
  type TrialAttempt,
  type TrialInfraReason,
  type TrialMetrics,
  VALIDATION_VERSION,
  type ValidationDocument,
} from "../../artifacts/index.js";
import type { Executor, RuntimeReceipt, SetupComponent } from "../../exec/index.js";
import { permissionDecisionsDocument, promptWithPreamble } from "../../exec/index.js";
import type { WriteLogEntry } from "../../forge/index.js";
import type { Grade } from "../../graders/index.js";
import { costEquivalentTokens } from "../../hosts/index.js";
import {
  createToolPolicy,
  type PolicyDecisionRecord,
  TOOL_USE_KINDS,
  type ToolUse,
} from "../../policy/index.js";
import type { CommandSandbox } from "../../sandbox/index.js";
import type { RepoState } from "../../scoring/index.js";
import { replaceLongestFirst } from "../../shared/index.js";
import {
  createTrialWorkspace,
  diffSnapshots,
  freeBytes,
  isDiskFull,
  isWorkspaceError,
  type SharedBaseline,
  snapshotTree,
  type TreeSnapshot,
  type TrialWorkspace,
  unpatchableEntries,
  watchDiskUse,
} from "../../workspace/index.js";
import {
  type AgentSpec,
  type Experiment,
  type ForgeArm,
  type RuntimeSpec,
  runtimeOf,
  type TaskSpec,
  type TrialJob,
  type VariantSpec,
} from "../experiment.js";
import type { AssembledVariant } from "../run/assemble.js";
import { markWorkspace, unmarkWorkspaceIfGone } from "../run/workspace-marker.js";
import { classifyTrial, type TrialEvidence } from "./classify.js";
import { startTrialForge, type TrialForge } from "./forge-trial.js";
import { gradePatch, integrityGrade } from "./grade-patch.js";
import type { PreparedGrader } from "./graders.js";
import {
  connectSetupToForge,
  materializeForgeProgram,
  materializeSetup,
  setupDocument,
  setupIntact,
  setupPolicy,
  trialSetupEntries,
} from "./setup.js";
import { type ArtifactScrubber, artifactScrubber, graderResults } from "./trial-record.js";

export interface TrialContext {
  /** The task's fixture as snapshotted before the run: what every trial starts from. */
  fixtureSnapshot: TreeSnapshot;
  experiment: Experiment;
  task: TaskSpec;
  variant: VariantSpec;
  assembled: AssembledVariant;
  graders: PreparedGrader[];
  executor: Executor;
  job: TrialJob;
  /** Absolute directory for this trial's artifacts (created here). */
  artifactDir: string;
  /** Exact strings that must never reach an artifact (credential values from the environment). */
  secretValues: readonly string[];
  signal?: AbortSignal;
  tempParent?: string;
  /** Told what the trial waits for (free disk space), for a person. */
  onNotice?: (line: string) => void;
  /** How long past its timeout an executor may take to return before the trial is abandoned. */
  executorGraceMs?: number;
  /** Earlier attempts of this trial that ended in infrastructure errors (--retry-infra). */
  retriedAttempts?: TrialAttempt[];
  /** Contains every process that may run the trial's code (see `src/sandbox`). */
  sandbox: CommandSandbox;
  /** The task's baseline the run shares; without it the trial's copies commit their own. */
  baseline?: SharedBaseline;
  /** Where live mode's forge token is read from (default: the process's environment). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Live mode: keep each trial's throwaway repository (--keep-forge-repos). */
  keepForgeRepos?: boolean;
  /**
   * Where the experiment's files are here, and where the run froze them: a queue's worker reads
   * them from an unpacked bundle, and its records name them as the coordinator's run would.
   */
  experimentRoot?: { here: string; recorded: string };
}

/** A forge trial's evidence: the state before and after the agent, and every write it made. */
interface ForgeEvidence {
  before: RepoState;
  after?: RepoState;
  writeLog?: WriteLogEntry[];
  location: string;
}

/** The preamble with the forge section a forge task adds (where the repository is, how to reach it). */
function withForgeNote(preamble: string, note: string): string {
  const head = preamble.trimEnd();
  return `${head === "" ? "" : `${head}\n\n`}Forge: ${note}\n`;
}

function toolUseCounts(calls: readonly ToolUse[]): ToolUseCounts {
  const counts = Object.fromEntries(TOOL_USE_KINDS.map((kind) => [kind, 0])) as ToolUseCounts;
  for (const call of calls) counts[call.kind] += 1;
  return counts;
}

const DEFAULT_EXECUTOR_GRACE_MS = 30_000;

/**
 * The most bytes of added or changed files a trial's patch may carry. A binary patch grows by
 * about a quarter, and the patch must fit in one string (512 MiB in V8) to be captured at all.
 */
const MAX_CHANGED_BYTES = 256 * 1024 * 1024;

/** Bytes of the files at `paths` in a snapshot (links and directories count nothing). */
function bytesOf(snapshot: TreeSnapshot, paths: readonly string[]): number {
  const wanted = new Set(paths);
  let total = 0;
  for (const entry of snapshot.files) if (wanted.has(entry.path)) total += entry.bytes;
  return total;
}

function agentArgument(agent: AgentSpec | undefined): string | undefined {
  if (agent === undefined) return undefined;
  switch (agent.kind) {
    case "nop":
      return "nop";
    case "oracle":
      return `oracle:${agent.patchFile}`;
    case "module":
      return agent.modulePath;
  }
}

function workspaceReason(error: unknown, fallback: TrialInfraReason): TrialInfraReason {
  if (isDiskFull(error)) return "disk_full";
  if (!isWorkspaceError(error)) return fallback;
  if (error.code === "git-failed") return "git_failed";
  if (error.code === "patch-failed") return "patch_capture_failed";
  if (error.code === "fixture-changed") return "fixture_changed";
  return fallback;
}

function errorText(error: unknown): string {
  if (isWorkspaceError(error)) return `${error.message} ${JSON.stringify(error.evidence)}`;
  return error instanceof Error ? error.message : String(error);
}

function toolSettings(runtime: RuntimeSpec) {
  if (runtime.host === "scripted") {
    return {
      tools: ["Read", "Write", "Edit", "Glob", "Grep", "Bash"],
      allowedTools: [] as string[],
      disallowedTools: ["WebFetch", "WebSearch"],
    };
  }
  return {
    tools: [...runtime.tools],
    allowedTools: [...runtime.allowedTools],
    disallowedTools: [...runtime.disallowedTools],
    model: runtime.model,
    permissionMode: runtime.permissionMode,
    maxTurns: runtime.maxTurns,
  };
}

/** Whether a setup component is a tool of its own beside the arm's (an MCP server, a skill, a subagent). */
function isAnotherTool(component: SetupComponent, arm: ForgeArm): boolean {
  if (component.mechanism === "mcp-server")
    return !(arm.tool?.kind === "mcp-server" && arm.tool.component === component.id);
  return component.mechanism === "native-skill" || component.mechanism === "subagent";
}

/**
 * The host tools of an agent whose forge tool is its only tool (`forge.only = true`): none for an
 * MCP arm (no shell, no file tools); only the shell for a command arm, which the policy lets run
 * only the arm's programs. (The setup's other tools are not handed over at all: isAnotherTool.)
 */
function onlyTheForgeTool(arm: ForgeArm): string[] {
  return arm.access === "mcp" || arm.tool?.kind === "mcp-server" ? [] : ["Bash"];
}

/**
 * Runs one trial to completion and writes every file of its folder but `metrics.json`; returns
 * its metrics, unsealed: the caller seals them with the run's key and writes them last (the
 * local pool and a queue's coordinator the same way, so a worker never holds the key). A trial
 * cut short by the run's signal returns `run_aborted` having written no record.
 */
export async function runTrial(context: TrialContext): Promise<TrialMetrics> {
  const held: HeldWorkspace = {};
  try {
    return await runTrialSteps(context, held);
  } catch (error) {
    // The caller records an unexpected throw as this trial's harness error; its workspace must
    // not outlive it either.
    await held.workspace?.cleanup().catch(() => {});
    await unmarkWorkspaceIfGone(context.artifactDir, held.tempDir).catch(() => {});
    throw error;
  }
}

/** The trial's workspace, and the directory noted for it before it existed. */
interface HeldWorkspace {
  workspace?: TrialWorkspace;
  tempDir?: string;
}

/** What the phases of one trial find out, in the order they run. */
interface TrialState {
  started: number;
  evidence: TrialEvidence;
  /** The text the agent receives (prompt.txt): the composition's preamble, then the task prompt. */
  preamble: string;
  prompt: string;
  forge?: TrialForge;
  forgeEvidence?: ForgeEvidence;
  decisions: PolicyDecisionRecord[];
  toolUse: ToolUse[] | null;
  /** The agent's final tree, which the grading copy must reproduce. */
  afterTree?: TreeSnapshot;
  changedFiles: string[];
  patchBytes?: Uint8Array;
  /** The patch as stored: trial paths and secrets masked. */
  storedPatch?: Buffer;
  patchRedacted: boolean;
  gradingError: string | null;
  stderrNotes: string[];
  /** The variant's setup as materialized for this trial (empty when it hands the host nothing). */
  setup: SetupComponent[];
  /** What became of it (`setup.json`), once the agent is done. */
  setupDocument?: SetupDocument;
  /** The workspaces' own path scrubbers, added as each workspace is made. */
  workspaceScrubs: Array<(text: string) => string>;
  scrubber: ArtifactScrubber;
}

async function runTrialSteps(context: TrialContext, held: HeldWorkspace): Promise<TrialMetrics> {
  const state = await beginTrial(context);
  await waitForDiskSpace(context, state);
  await prepareWorkspace(context, state, held);
  await prepareSetup(context, state, held);
  await startForge(context, state, held);
  await runAgent(context, state, held);
  await captureForge(state);
  await captureChange(context, state, held);
  // Everything of the agent's workspace that counts is captured: from here on only the patch
  // matters, graded on a fresh copy of the fixture.
  if (held.workspace) {
    await held.workspace.cleanup().catch(() => {});
    await unmarkWorkspaceIfGone(context.artifactDir, held.tempDir);
  }
  await gradeChange(context, state, held);
  const metrics = describeTrial(context, state);
  await writeTrialFiles(context, state);
  // A workspace that could not be removed keeps its note, so --resume still finds it.
  await unmarkWorkspaceIfGone(context.artifactDir, held.tempDir);
  // A trial the user's interruption cut short says nothing about the agent: it stays
  // unfinished (no metrics.json), and --resume runs it again.
  if (context.signal?.aborted && metrics.outcome === "infrastructure_error")
    return { ...metrics, infraReason: "run_aborted" };
  return state.scrubber.value(metrics) as TrialMetrics;
}

async function beginTrial(context: TrialContext): Promise<TrialState> {
  const tempParent = context.tempParent ?? tmpdir();
  const tempParents = [tempParent, await realpath(tempParent).catch(() => tempParent)];
  const workspaceScrubs: Array<(text: string) => string> = [];
  const root = context.experimentRoot;
  if (root !== undefined && root.here !== root.recorded)
    workspaceScrubs.push((text) => replaceLongestFirst(text, [[root.here, root.recorded]]));
  const preamble = context.assembled.preamble;
  return {
    started: performance.now(),
    evidence: {},
    preamble,
    prompt: promptWithPreamble(context.task.prompt, preamble),
    decisions: [],
    toolUse: null,
    setup: [],
    changedFiles: [],
    patchRedacted: false,
    gradingError: null,
    stderrNotes: [],
    workspaceScrubs,
    scrubber: artifactScrubber({
      tempParents,
      secretValues: context.secretValues,
      workspaceScrubs: () => workspaceScrubs,
    }),
  };
}

/** Whether the trial still goes on: its workspace exists, no harness step failed, it did not fail. */
function proceeding(state: TrialState, held: HeldWorkspace): held is { workspace: TrialWorkspace } {
  return (
    held.workspace !== undefined &&
    state.evidence.harnessFailure === undefined &&
    state.evidence.trialFailure === undefined
  );
}

const MiB = 1024 * 1024;

/** "312 MiB", for messages about disk space. */
function mib(bytes: number): string {
  return `${Math.ceil(bytes / MiB)} MiB`;
}

/** A trial that went over its disk budget: failed, with that in its evidence. */
function overDiskBudget(state: TrialState, budget: number, bytes: number, when: string): void {
  const detail = `disk budget exceeded: the trial took ${mib(bytes)} on disk ${when}, over its budget of ${mib(budget)} (diskBudgetMB); it was stopped`;
  state.evidence.trialFailure = detail;
  state.evidence.grades = [integrityGrade("disk-budget", detail, { bytes, budgetBytes: budget })];
}

/** How long a trial waits for free space before it gives up (an infrastructure error). */
const DISK_WAIT_MS = 120_000;

/**
 * The least free space a trial starts with: enough for the first part of its budget, so a full
 * disk stops new trials instead of failing them half-way (and another trial's failure is never
 * blamed on this one).
 */
function diskStartThreshold(budgetBytes: number): number {
  return Math.max(64 * MiB, Math.min(budgetBytes, 256 * MiB));
}

/** Waits while the trials' file system has less free space than a trial starts with. */
async function waitForDiskSpace(context: TrialContext, state: TrialState): Promise<void> {
  const where = context.tempParent ?? tmpdir();
  const needed = diskStartThreshold(context.experiment.diskBudgetBytes);
  const deadline = performance.now() + DISK_WAIT_MS;
  let told = false;
  for (;;) {
    const free = await freeBytes(where).catch(() => Number.POSITIVE_INFINITY);
    if (free >= needed) return;
    if (context.signal?.aborted) return;
    if (performance.now() >= deadline) {
      state.evidence.harnessFailure = {
        reason: "disk_full",
        message: `only ${mib(free)} free in ${where}, below the ${mib(needed)} a trial starts with; free space there (or lower diskBudgetMB) and run again with --resume`,
      };
      return;
    }
    if (!told) {
      told = true;
      context.onNotice?.(
        `disk: only ${mib(free)} free in ${where}, below the ${mib(needed)} a trial starts with: trial ${context.job.seq} waits for space (up to ${DISK_WAIT_MS / 1000} s)`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}

/** A fresh copy of the fixture with its git baseline, checked against the frozen snapshot. */
async function prepareWorkspace(
  context: TrialContext,
  state: TrialState,
  held: HeldWorkspace,
): Promise<void> {
  if (state.evidence.harnessFailure !== undefined) return;
  try {
    held.workspace = await createTrialWorkspace(context.task.fixtureDir, {
      ...(context.tempParent ? { tempParent: context.tempParent } : {}),
      // Noted before the directory exists, so a run killed at any point leaves no workspace
      // that --resume cannot find.
      beforeCreate: async (tempDir) => {
        await mkdir(context.artifactDir, { recursive: true });
        await markWorkspace(context.artifactDir, tempDir);
        held.tempDir = tempDir;
      },
      expectedFixture: context.fixtureSnapshot,
      ...(context.baseline ? { baseline: context.baseline } : {}),
    });
    state.workspaceScrubs.push(held.workspace.scrubPaths);
  } catch (error) {
    state.evidence.harnessFailure = {
      reason: workspaceReason(error, "fixture_copy_failed"),
      message: errorText(error),
    };
  }
}

/**
 * The variant's setup, materialized beside the trial (never inside it: the agent cannot change
 * it, it never reaches the patch, and graders never see it).
 */
async function prepareSetup(
  context: TrialContext,
  state: TrialState,
  held: HeldWorkspace,
): Promise<void> {
  const planned = context.assembled.setup;
  if (!proceeding(state, held) || planned.length === 0) return;
  try {
    state.setup = await materializeSetup(
      planned,
      join(dirname(held.workspace.scratchDir), "setup"),
    );
  } catch (error) {
    state.evidence.harnessFailure = {
      reason: isDiskFull(error) ? "disk_full" : "setup_failed",
      message: `cannot materialize the variant's setup: ${errorText(error)}`,
    };
  }
}

/** A forge task's forge (or live repository), and the preamble's note on how to reach it. */
async function startForge(
  context: TrialContext,
  state: TrialState,
  held: HeldWorkspace,
): Promise<void> {
  const { experiment, task, variant, assembled, job } = context;
  if (!proceeding(state, held)) return;
  if (task.forge === undefined) {
    state.setup = connectSetupToForge(state.setup, undefined);
    return;
  }
  try {
    if (experiment.forge === undefined) throw new Error("the experiment has no forge settings");
    state.forge = await startTrialForge({
      forge: task.forge,
      settings: experiment.forge,
      arm: assembled.forgeArm,
      sandbox: context.sandbox,
      // The trial's own temporary directory: harness-owned, and no sandbox binds it.
      privateDir: dirname(held.workspace.scratchDir),
      env: context.env ?? process.env,
      label: `${task.id}-${variant.id}-${job.trialIndex}`,
      ...(context.keepForgeRepos ? { keepRepo: true } : {}),
    });
    state.forgeEvidence = { before: state.forge.before, location: state.forge.location };
    const forge = state.forge;
    if (
      assembled.forgeProgram !== undefined &&
      context.sandbox.kind === "none" &&
      runtimeOf(experiment, variant).host !== "scripted"
    )
      throw new Error(
        `the forge tool is a program, which ${runtimeOf(experiment, variant).host} runs by its name only in the sandbox (without it, its shell starts from the system's own PATH)`,
      );
    if (assembled.forgeProgram !== undefined)
      forge.access.programDir = await materializeForgeProgram(
        assembled.forgeProgram,
        join(dirname(held.workspace.scratchDir), "forge-program"),
        forge.placeholders,
      );
    state.setup = connectSetupToForge(state.setup, {
      placeholders: forge.placeholders,
      ...(forge.access.tool === undefined ? {} : { tool: forge.access.tool }),
      ...(forge.access.endpoint.grant === undefined ? {} : { grant: forge.access.endpoint.grant }),
    });
    state.preamble = withForgeNote(state.preamble, state.forge.note);
    state.prompt = promptWithPreamble(task.prompt, state.preamble);
  } catch (error) {
    state.evidence.harnessFailure = {
      reason: "forge_failed",
      message: `cannot prepare the trial's forge: ${errorText(error)}`,
    };
  }
}

/** The executor runs the agent under the trial's tool policy, abandoned if it does not return. */
async function runAgent(
  context: TrialContext,
  state: TrialState,
  held: HeldWorkspace,
): Promise<void> {
  const { experiment, task, variant, job } = context;
  if (!proceeding(state, held)) return;
  const workspace = held.workspace;
  const runtime = runtimeOf(experiment, variant);
  const arm = context.assembled.forgeArm;
  const only = state.forge !== undefined && arm.only;
  // The host is not even given what an only-tool agent may not use.
  if (only) state.setup = state.setup.filter((component) => !isAnotherTool(component, arm));
  const fullSettings = toolSettings(runtime);
  const settings = only ? { ...fullSettings, tools: onlyTheForgeTool(arm) } : fullSettings;
  const policy = createToolPolicy({
    trialRoot: workspace.root,
    allowedWrites: task.expectedFiles,
    allowedCommands: only ? [] : runtime.validationCommands,
    tools: settings.tools,
    mcpTools: state.forge?.access.mcp?.tools ?? [],
    ...setupPolicy(state.setup),
    commandPrograms: state.forge?.access.commands ?? [],
  });
  // An executor must honour its own timeout; one that does not return within the
  // budget plus a grace period is abandoned so one hung SDK cannot stall the run.
  const guard = new AbortController();
  const signal = context.signal ? AbortSignal.any([context.signal, guard.signal]) : guard.signal;
  const graceMs = context.executorGraceMs ?? DEFAULT_EXECUTOR_GRACE_MS;
  // The agent, and every command it runs, stops when the workspace goes over its disk budget.
  const budget = experiment.diskBudgetBytes;
  let overBudget: number | undefined;
  const watch = watchDiskUse({
    roots: () => [workspace.root],
    budgetBytes: budget,
    onExceeded: (bytes) => {
      overBudget = bytes;
      guard.abort(new Error("the trial went over its disk budget"));
    },
  });
  let guardTimer: NodeJS.Timeout | undefined;
  const abandoned = new Promise<"abandoned">((resolve) => {
    guardTimer = setTimeout(
      () => {
        guard.abort(new Error("the executor did not return in time"));
        resolve("abandoned");
      },
      Math.min(runtime.timeoutMs + graceMs, 2_147_483_647),
    );
  });
  try {
    const agent = agentArgument(variant.agent);
    const outcome = await Promise.race([
      context.executor.run({
        prompt: state.prompt,
        preamble: state.preamble,
        cwd: workspace.root,
        policy,
        timeoutMs: runtime.timeoutMs,
        signal,
        scratchDir: workspace.scratchDir,
        sandbox: context.sandbox,
        runtime:
          variant.runtimeProfile === undefined
            ? settings
            : { ...settings, profile: variant.runtimeProfile },
        ...(agent === undefined ? {} : { agent }),
        trialIndex: job.trialIndex,
        variant: variant.id,
        task: task.id,
        ...(state.forge === undefined ? {} : { forge: state.forge.access }),
        ...(state.setup.length === 0 ? {} : { setup: state.setup }),
      }),
      abandoned,
    ]);
    if (outcome === "abandoned") {
      state.evidence.harnessFailure = {
        reason: "executor_unresponsive",
        message: `the ${context.executor.host} executor did not return within its ${runtime.timeoutMs} ms timeout plus ${graceMs} ms; the trial was abandoned`,
      };
    } else {
      state.evidence.receipt = outcome;
    }
  } catch (error) {
    state.evidence.harnessFailure = { reason: "executor_threw", message: errorText(error) };
  } finally {
    clearTimeout(guardTimer);
    await watch.stop();
  }
  state.decisions = policy.decisions();
  state.toolUse = policy.toolUse();
  await recordSetup(context, state);
  if (overBudget !== undefined) {
    // Whatever the executor made of its stop, the trial ended because of what it wrote.
    delete state.evidence.harnessFailure;
    overDiskBudget(state, budget, overBudget, "while its agent ran");
  }
}

/**
 * What became of the setup: the host's report, the calls of its tools, and whether its files are
 * still as materialized. A file that changed means something of the trial's wrote where nothing
 * may: the trial fails its integrity check.
 */
async function recordSetup(context: TrialContext, state: TrialState): Promise<void> {
  if (state.setup.length === 0) return;
  const intact = await setupIntact(state.setup);
  state.setupDocument = setupDocument({
    host: context.executor.host,
    components: state.setup,
    receipt: state.evidence.receipt,
    toolUse: state.toolUse ?? [],
    intact,
  });
  const changed = [...intact].filter(([, same]) => !same).map(([id]) => id);
  if (changed.length > 0 && state.evidence.trialFailure === undefined) {
    const detail = `the materialized setup of ${changed.join(", ")} changed while the agent ran; nothing of the trial's may write there`;
    state.evidence.trialFailure = detail;
    state.evidence.grades = [integrityGrade("setup-intact", detail, { components: changed })];
  }
}

/** The forge's state is read once the agent stopped (and before grading, which needs it). */
async function captureForge(state: TrialState): Promise<void> {
  const { forge, forgeEvidence, evidence } = state;
  if (forge === undefined || forgeEvidence === undefined) return;
  if (!evidence.harnessFailure)
    try {
      const captured = await forge.capture();
      forgeEvidence.after = captured.after;
      forgeEvidence.writeLog = captured.writeLog;
    } catch (error) {
      evidence.harnessFailure = {
        reason: "forge_failed",
        message: `cannot read the trial's forge after the agent: ${errorText(error)}`,
      };
    }
  await forge.close().catch((error: unknown) => {
    state.stderrNotes.push(`harness: the trial's forge did not close cleanly: ${errorText(error)}`);
  });
}

/** Whether the agent's change is to be graded: it ran, and nothing of the harness failed. */
function gradable(state: TrialState, held: HeldWorkspace): boolean {
  const status = state.evidence.receipt?.status;
  return proceeding(state, held) && status !== "infra_error" && status !== "aborted";
}

/**
 * What the agent changed: the harness's own snapshot of the tree against the fixture, and the
 * patch git captures (or the integrity check the change fails when no patch can carry it).
 */
async function captureChange(
  context: TrialContext,
  state: TrialState,
  held: HeldWorkspace,
): Promise<void> {
  if (!proceeding(state, held)) return;
  const workspace = held.workspace;
  const fail = (grade: Grade) => {
    if (gradable(state, held)) state.evidence.grades = [grade];
  };
  try {
    // Every byte read again: code the agent ran can change a file without changing its stat data
    // (extent-swapping ioctls on ext4 and XFS), so nothing it could have touched is taken on trust.
    const after = await snapshotTree(workspace.root, { mode: "trial" });
    state.afterTree = after;
    const size = after.files.reduce((sum, entry) => sum + entry.bytes, 0);
    if (size > context.experiment.diskBudgetBytes) {
      overDiskBudget(state, context.experiment.diskBudgetBytes, size, "when its agent finished");
      return;
    }
    // Git's view can be forged by code the agent ran (a commit, an ignore rule); the
    // harness's own snapshots cannot. A fixture file that changed or vanished is always
    // counted, whatever git says.
    const drift = diffSnapshots(context.fixtureSnapshot, after);
    const unpatchable = unpatchableEntries(after);
    const changedBytes = bytesOf(after, [...drift.added, ...drift.modified]);
    const drifted = () => [...drift.added, ...drift.modified, ...drift.deleted].sort();
    if (unpatchable.length === 0 && changedBytes > MAX_CHANGED_BYTES) {
      state.changedFiles = drifted();
      fail(
        integrityGrade(
          "patchable",
          `the trial added or changed ${changedBytes} bytes of files; a patch carries at most ${MAX_CHANGED_BYTES}`,
        ),
      );
      return;
    }
    if (unpatchable.length > 0) {
      state.changedFiles = drifted();
      fail(
        integrityGrade(
          "patchable",
          `the trial left what no patch can carry: ${unpatchable
            .slice(0, 10)
            .map((entry) => `${entry.path} ${entry.reason}`)
            .join("; ")}`,
          { entries: unpatchable.slice(0, 100) },
        ),
      );
      return;
    }
    const patch = await workspace.capturePatch({ addsPaths: drift.added.length > 0 });
    state.changedFiles = patch.changedFiles;
    const unreported = [...drift.modified, ...drift.deleted].filter(
      (f) => !state.changedFiles.includes(f),
    );
    if (unreported.length > 0) {
      state.changedFiles = [...state.changedFiles, ...unreported].sort();
      state.stderrNotes.push(
        `harness: files changed that git did not report (counted as changed): ${unreported.join(", ")}`,
      );
    }
    state.patchBytes = patch.patchBytes;
    const scrubbed = scrubPatchBytes(patch.patchBytes, [
      [workspace.root, "<trial-root>"],
      [workspace.realRoot, "<trial-root>"],
      ...context.secretValues.map((secret) => [secret, "[REDACTED]"] as const),
    ]);
    state.storedPatch = scrubbed.bytes;
    state.patchRedacted = scrubbed.redacted;
  } catch (error) {
    // A git that fails outside the trial too, or a full file system, is not the trial's doing
    // (anything else on the machine may have broken git or filled the disk): retried, never
    // blamed on this trial. Nor are shared packs found damaged (only code outside the sandbox
    // can): the run's fixture changed, and no verdict is given.
    if (
      isWorkspaceError(error) &&
      (error.code === "git-failed" || error.code === "fixture-changed")
    ) {
      state.evidence.harnessFailure = {
        reason: workspaceReason(error, "patch_capture_failed"),
        message: errorText(error),
      };
      return;
    }
    if (isDiskFull(error)) {
      state.evidence.harnessFailure = {
        reason: "disk_full",
        message: `cannot capture the trial's change: ${errorText(error)}`,
      };
      return;
    }
    // Between the baseline and now only the trial has touched its workspace: whatever keeps
    // the harness from listing or capturing it (a .git deleted or replaced, a name git
    // refuses, one that is not UTF-8, a tree deeper than a path can name, millions of files)
    // is the trial's failure, never an infrastructure error it could have retried.
    fail(
      isWorkspaceError(error) && error.code === "patch-failed" && error.causedByTrial
        ? integrityGrade("repository-intact", `the trial damaged its repository: ${error.message}`)
        : integrityGrade(
            "patchable",
            `the harness cannot list or capture what the trial left: ${errorText(error)}`,
          ),
    );
  }
}

/** The graders on the captured patch, through the one grading path run and regrade share. */
async function gradeChange(
  context: TrialContext,
  state: TrialState,
  held: HeldWorkspace,
): Promise<void> {
  if (!gradable(state, held) || state.evidence.grades !== undefined) return;
  const graded = await gradePatch({
    task: context.task,
    graders: context.graders,
    fixtureSnapshot: context.fixtureSnapshot,
    patch: state.patchBytes ?? new Uint8Array(),
    changedFiles: state.changedFiles,
    finalText: state.evidence.receipt?.finalText ?? "",
    ...(state.forgeEvidence?.after === undefined ? {} : { forgeState: state.forgeEvidence.after }),
    sandbox: context.sandbox,
    ...(context.baseline ? { baseline: context.baseline } : {}),
    ...(context.tempParent ? { tempParent: context.tempParent } : {}),
    beforeCreate: async (tempDir) => {
      await markWorkspace(context.artifactDir, tempDir);
      held.tempDir = tempDir;
    },
    ...(state.afterTree ? { expectedTree: state.afterTree } : {}),
    ...(context.signal ? { signal: context.signal } : {}),
    diskBudgetBytes: context.experiment.diskBudgetBytes,
  });
  state.workspaceScrubs.push(graded.scrubPaths);
  state.evidence.grades = graded.grades;
  if (graded.harnessFailure) {
    state.evidence.harnessFailure = graded.harnessFailure;
    state.gradingError = graded.harnessFailure.message;
  }
  await unmarkWorkspaceIfGone(context.artifactDir, held.tempDir);
}

/** The trial's metrics (judged by classifyTrial), and its stderr notes. */
function describeTrial(context: TrialContext, state: TrialState): TrialMetrics {
  const { evidence, scrubber } = state;
  const classification = classifyTrial(evidence);
  const receipt = evidence.receipt;
  if (receipt?.error) state.stderrNotes.push(`executor: ${receipt.error}`);
  if (evidence.harnessFailure)
    state.stderrNotes.push(
      `harness: ${evidence.harnessFailure.reason}: ${evidence.harnessFailure.message}`,
    );
  return {
    schemaVersion: TRIAL_METRICS_VERSION,
    task: context.task.id,
    variant: context.variant.id,
    trial: context.job.trialIndex,
    seq: context.job.seq,
    outcome: classification.outcome,
    infraReason: classification.infraReason,
    explanation: scrubber.text(classification.explanation),
    receiptStatus: receipt?.status ?? null,
    score: classification.score,
    gradePassed: classification.gradePassed,
    graders: graderResults(evidence.grades ?? []),
    changedFiles: state.changedFiles,
    patchBytes: state.patchBytes?.length ?? null,
    patchRedacted: state.patchRedacted,
    durationMs: Math.round(performance.now() - state.started),
    agentWallTimeMs: receipt ? Math.round(receipt.wallTimeMs) : null,
    tokens: receipt?.tokens ?? null,
    costUsd: receipt?.costUsd ?? null,
    credits: receipt?.credits ?? null,
    turns: receipt?.turns ?? null,
    costEquivalentTokens: receipt
      ? costEquivalentTokens(receipt.executor.host, receipt.tokens)
      : null,
    toolCalls: receipt?.toolCalls ?? null,
    toolUse: state.toolUse === null ? null : toolUseCounts(state.toolUse),
    permissionDenials: state.decisions.filter((d) => d.decision === "deny").length,
    retriedAttempts: context.retriedAttempts ?? [],
    ...(state.setupDocument === undefined ? {} : { setup: trialSetupEntries(state.setupDocument) }),
  };
}

/** Every file of the trial's folder but metrics.json, masked; none is written if one cannot be made. */
async function writeTrialFiles(context: TrialContext, state: TrialState): Promise<void> {
  const { evidence, scrubber } = state;
  const receipt = evidence.receipt;
  const validation: ValidationDocument = {
    schemaVersion: VALIDATION_VERSION,
    grades: evidence.grades ?? [],
    error: state.gradingError === null ? null : scrubber.text(state.gradingError),
  };
  const storedReceipt: RuntimeReceipt | null = receipt ? { ...receipt, trace: [] } : null;
  const json = (value: unknown) => `${JSON.stringify(scrubber.value(value), null, 2)}\n`;
  const stderrNotes = state.stderrNotes.map(scrubber.text);
  // Every file's content is made before the first write: a value that cannot be serialized then
  // throws before anything is written, instead of leaving writes racing the runner's record.
  const files: Array<[string, string | Uint8Array]> = [
    ["prompt.txt", scrubber.text(state.prompt)],
    ["response.txt", scrubber.text(receipt?.finalText ?? "")],
    ["stderr.txt", stderrNotes.length > 0 ? `${stderrNotes.join("\n")}\n` : ""],
    ["patch.diff", state.storedPatch ?? ""],
    [
      "trace.jsonl",
      (receipt?.trace ?? []).map((event) => JSON.stringify(scrubber.value(event))).join("\n") +
        ((receipt?.trace.length ?? 0) > 0 ? "\n" : ""),
    ],
    ["permission-decisions.json", json(permissionDecisionsDocument(state.decisions))],
    ["validation.json", json(validation)],
    ["runtime-receipt.json", json(storedReceipt)],
  ];
  // Every trial folder has it (empty when the agent never ran), as every other record.
  const toolUseDocument: ToolUseDocument = {
    schemaVersion: TOOL_USE_VERSION,
    counts: toolUseCounts(state.toolUse ?? []),
    calls: state.toolUse ?? [],
  };
  files.push(["tool-use.json", json(toolUseDocument)]);
  if (state.setupDocument !== undefined) files.push(["setup.json", json(state.setupDocument)]);
  // A forge trial's evidence: the state the agent started from, the state it left, its writes.
  const forge = state.forgeEvidence;
  if (forge !== undefined) {
    files.push(["forge-before.json", json(forge.before)]);
    if (forge.after !== undefined) files.push(["forge-after.json", json(forge.after)]);
    if (forge.writeLog !== undefined) files.push(["forge-write-log.json", json(forge.writeLog)]);
  }
  await mkdir(context.artifactDir, { recursive: true });
  await Promise.all(
    files.map(([name, content]) => writeFile(join(context.artifactDir, name), content)),
  );
}

/**
 * The patch is stored byte for byte, so it still applies: only exact occurrences of the trial
 * root and of secret values are replaced (working on bytes, so non-UTF-8 content is kept), and
 * `redacted` says whether anything was, because such a patch no longer reproduces the trial.
 */
function scrubPatchBytes(
  bytes: Uint8Array,
  replacements: ReadonlyArray<readonly [string, string]>,
): { bytes: Buffer; redacted: boolean } {
  // latin1 maps every byte to one code unit and back, so replacing in it is byte-exact.
  const original = Buffer.from(bytes).toString("latin1");
  const text = replaceLongestFirst(
    original,
    replacements.map(([from, to]) => [Buffer.from(from, "utf8").toString("latin1"), to] as const),
  );
  return { bytes: Buffer.from(text, "latin1"), redacted: text !== original };
}

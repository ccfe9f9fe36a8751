// Turns a checked manifest document (either version) into the one experiment model.
// Pure: prompt texts are read by the caller and passed in.
import { resolve } from "node:path";
import type { RepoState } from "../../scoring/index.js";
import type { InputProblem } from "../../shared/index.js";
import { assumedTrial, decideVerdict, formatP, plural } from "../../stats/index.js";
import type {
  AgentSpec,
  Experiment,
  ForgeSettings,
  GraderSpec,
  RuntimeSpec,
  TaskSpec,
  VariantSpec,
  VerdictPolicy,
} from "../experiment.js";
import { plannedOrder } from "../run/plan.js";
import { parseAgentReference } from "./agents.js";
import { normalizeChangeSurfacePath } from "./paths.js";
import type { HarnessCompareV1 } from "./schema-v1.js";
import { V1_VALIDATION_COMMANDS } from "./schema-v1.js";
import type {
  HarnessCompareV2,
  HarnessCompareV2Grader,
  HarnessCompareV2Variant,
} from "./schema-v2.js";
import { V2_DEFAULTS } from "./schema-v2.js";

export interface BuildContext {
  manifestPath: string;
  manifestDir: string;
  /** Effective trial count (the manifest's, or a lower `--trials`). */
  trialCount: number;
  /** Prompt text by absolute prompt path. */
  prompts: ReadonlyMap<string, string>;
  /** Validated forge documents (seeds, expected states) by absolute path. */
  forgeStates?: ReadonlyMap<string, RepoState>;
  /** Each forge-state grader's expected end state, by `tasks[i].graders[j]`. */
  expectedStates?: ReadonlyMap<string, RepoState>;
  /** Where each variant expanded from a matrix sits (`matrix[opus_plain]`), by its index. */
  variantFields?: ReadonlyMap<number, string>;
}

/** The task id a v1 manifest's single task gets. */
const V1_TASK_ID = "task";

function sortedChangeSurface(paths: readonly string[]): string[] {
  const normalized = paths.map((path) => {
    const result = normalizeChangeSurfacePath(path);
    if (!result.ok) throw new Error(`unchecked expected file ${path}: ${result.problem}`);
    return result.path;
  });
  return [...new Set(normalized)].sort();
}

function promptText(context: BuildContext, promptFile: string): string {
  const text = context.prompts.get(promptFile);
  if (text === undefined) throw new Error(`prompt ${promptFile} was not read before building`);
  return text;
}

export function experimentFromV1(manifest: HarnessCompareV1, context: BuildContext): Experiment {
  const at = (path: string) => resolve(context.manifestDir, path);
  const promptFile = at(manifest.task.prompt);
  const task: TaskSpec = {
    id: V1_TASK_ID,
    fixtureDir: at(manifest.task.fixture),
    promptFile,
    prompt: promptText(context, promptFile),
    expectedFiles: sortedChangeSurface(manifest.task.expectedFiles),
    graders: [
      {
        kind: "readme-package-v1",
        id: "readme-package-v1",
        contractFile: at(manifest.task.grader.contract),
      },
    ],
    manifestField: "task",
  };
  const variant = (role: "baseline" | "candidate"): VariantSpec => ({
    id: role === "baseline" ? "H0" : "H1",
    label: role,
    composition: manifest.variants[role],
    ...(manifest.runtimeProfiles === undefined
      ? {}
      : { runtimeProfile: manifest.runtimeProfiles[role] }),
    isBaseline: role === "baseline",
    compositionField: `variants.${role}`,
    manifestField: `variants.${role}`,
  });
  const runtime: RuntimeSpec = {
    host: manifest.runtime.host,
    ...(manifest.runtime.model === undefined ? {} : { model: manifest.runtime.model }),
    tools: [...manifest.runtime.tools],
    allowedTools: [],
    disallowedTools: [...manifest.runtime.disallowedTools],
    permissionMode: manifest.runtime.permissionMode,
    maxTurns: manifest.runtime.maxTurns,
    timeoutMs: manifest.runtime.timeoutMs,
    network: "deny",
    enableFileCheckpointing: manifest.runtime.enableFileCheckpointing ?? false,
    validationCommands: V1_VALIDATION_COMMANDS.map((argv) => [...argv]),
  };
  return {
    schemaVersion: manifest.schemaVersion,
    layout: "v1",
    manifestPath: context.manifestPath,
    manifestDir: context.manifestDir,
    harnessFiles: [at(manifest.harness)],
    tasks: [task],
    variants: [variant("baseline"), variant("candidate")],
    baseline: "H0",
    runtime,
    trials: {
      count: context.trialCount,
      manifestCount: manifest.trials.count,
      seed: manifest.trials.seed,
      order: manifest.trials.order,
    },
    // better-harness's decision rules; a v1 manifest cannot name another policy.
    verdict: { kind: "heuristic-v1" },
    concurrency: 1,
    diskBudgetBytes: V2_DEFAULTS.diskBudgetMB * 1024 * 1024,
  };
}

function graderFromV2(
  grader: HarnessCompareV2Grader,
  field: string,
  context: BuildContext,
): GraderSpec {
  const manifestDir = context.manifestDir;
  switch (grader.kind) {
    case "scope":
      return { kind: "scope", id: "scope", mode: grader.mode ?? V2_DEFAULTS.scopeMode };
    case "command":
      return {
        kind: "command",
        id: grader.id,
        argv: [...grader.argv],
        timeoutMs: grader.timeoutMs ?? V2_DEFAULTS.commandTimeoutMs,
        expectedExitCode: grader.expectedExitCode ?? V2_DEFAULTS.expectedExitCode,
      };
    case "tests":
      return {
        kind: "tests",
        id: grader.id,
        runner: grader.runner ?? "node",
        files: [...(grader.files ?? [])],
        hidden: (grader.hidden ?? []).map((file) => resolve(manifestDir, file)),
        ...(grader.argv === undefined ? {} : { argv: [...grader.argv] }),
        failToPass: [...(grader.failToPass ?? [])],
        passToPass: [...(grader.passToPass ?? [])],
        ...(grader.minTests === undefined ? {} : { minTests: grader.minTests }),
        timeoutMs: grader.timeoutMs ?? V2_DEFAULTS.commandTimeoutMs,
      };
    case "readme-package-v1":
      return {
        kind: "readme-package-v1",
        id: "readme-package-v1",
        contractFile: resolve(manifestDir, grader.contract),
      };
    case "forge-state": {
      const expected = context.expectedStates?.get(field);
      if (expected === undefined) throw new Error(`the expected state of ${field} was not built`);
      return {
        kind: "forge-state",
        id: "forge-state",
        expected,
        source:
          grader.changes !== undefined
            ? { changes: grader.changes }
            : { file: resolve(manifestDir, grader.expected as string) },
      };
    }
    case "read-facts":
      return { kind: "read-facts", id: "read-facts", facts: grader.facts };
  }
}

/** The experiment's forge settings with defaults, when any task is a forge task. */
function forgeSettingsFromV2(manifest: HarnessCompareV2): ForgeSettings | undefined {
  if (!manifest.tasks.some((task) => task.forge !== undefined)) return undefined;
  const forge = manifest.forge ?? { kind: "local" as const };
  const commands = [...(forge.commands ?? V2_DEFAULTS.forgeCommands)];
  if (forge.kind === "gitea")
    return {
      kind: "gitea",
      url: forge.url,
      tokenEnv: forge.tokenEnv,
      owner: forge.owner,
      user: forge.user,
      author: forge.author ?? forge.user,
      commands,
    };
  return {
    kind: "local",
    user: forge.user ?? V2_DEFAULTS.forgeUser,
    author: forge.author ?? V2_DEFAULTS.forgeAuthor,
    commands,
  };
}

function agentFromV2(agent: string | undefined, manifestDir: string): AgentSpec | undefined {
  if (agent === undefined) return undefined;
  const parsed = parseAgentReference(agent);
  if (!parsed.ok) throw new Error(`unchecked agent ${agent}: ${parsed.problem}`);
  switch (parsed.agent.kind) {
    case "nop":
      return { kind: "nop" };
    case "oracle":
      return { kind: "oracle", patchFile: resolve(manifestDir, parsed.agent.patch) };
    case "module":
      return { kind: "module", modulePath: resolve(manifestDir, parsed.agent.module) };
  }
}

/**
 * A variant's own runtime: the experiment's with the fields the variant sets; undefined when it
 * sets none. A scripted variant of a real-host experiment keeps only what the scripted host has.
 */
function variantRuntimeFromV2(
  variant: HarnessCompareV2Variant,
  runtime: RuntimeSpec,
): RuntimeSpec | undefined {
  const { host, model, maxTurns, timeoutMs, permissionMode } = variant;
  if ([host, model, maxTurns, timeoutMs, permissionMode].every((v) => v === undefined))
    return undefined;
  const validationCommands = runtime.validationCommands.map((argv) => [...argv]);
  const ownTimeout = timeoutMs ?? runtime.timeoutMs;
  if ((host ?? runtime.host) === "scripted")
    return { host: "scripted", timeoutMs: ownTimeout, network: "deny", validationCommands };
  if (runtime.host === "scripted")
    throw new Error(`unchecked variant ${variant.id}: a real host in a scripted experiment`);
  return {
    ...runtime,
    host: (host ?? runtime.host) as typeof runtime.host,
    ...(model === undefined ? {} : { model }),
    maxTurns: maxTurns ?? runtime.maxTurns,
    timeoutMs: ownTimeout,
    tools: [...runtime.tools],
    allowedTools: [...runtime.allowedTools],
    disallowedTools: [...runtime.disallowedTools],
    validationCommands,
  };
}

function runtimeFromV2(runtime: HarnessCompareV2["runtime"]): RuntimeSpec {
  const validationCommands = runtime.validationCommands.map((argv) => [...argv]);
  if (runtime.host === "scripted")
    return { host: "scripted", timeoutMs: runtime.timeoutMs, network: "deny", validationCommands };
  return {
    host: runtime.host,
    model: runtime.model,
    tools: [...runtime.tools],
    allowedTools: [],
    disallowedTools: [...runtime.disallowedTools],
    permissionMode: "default",
    maxTurns: runtime.maxTurns,
    timeoutMs: runtime.timeoutMs,
    network: "deny",
    enableFileCheckpointing: runtime.enableFileCheckpointing ?? V2_DEFAULTS.enableFileCheckpointing,
    validationCommands,
  };
}

function verdictFromV2(verdict: HarnessCompareV2["verdict"]): VerdictPolicy {
  if (verdict?.policy === "heuristic-v1") return { kind: "heuristic-v1" };
  return {
    kind: "paired-v1",
    alpha: verdict?.alpha ?? V2_DEFAULTS.alpha,
    minTrials: verdict?.minTrials ?? V2_DEFAULTS.minTrials,
    maxCostRatio: verdict?.maxCostRatio ?? V2_DEFAULTS.maxCostRatio,
    // Absent means fixed; left out so runs recorded before designs existed keep their inputs hash.
    ...(verdict?.design === undefined ? {} : { design: verdict.design }),
  };
}

export function experimentFromV2(manifest: HarnessCompareV2, context: BuildContext): Experiment {
  const at = (path: string) => resolve(context.manifestDir, path);
  const harness = typeof manifest.harness === "string" ? [manifest.harness] : manifest.harness;
  const tasks = manifest.tasks.map((task, index): TaskSpec => {
    const promptFile = at(task.prompt);
    const seedFile = task.forge === undefined ? undefined : at(task.forge.seed);
    const seed = seedFile === undefined ? undefined : context.forgeStates?.get(seedFile);
    if (seedFile !== undefined && seed === undefined)
      throw new Error(`seed ${seedFile} was not read before building`);
    return {
      id: task.id,
      fixtureDir: at(task.fixture),
      promptFile,
      prompt: promptText(context, promptFile),
      expectedFiles: sortedChangeSurface(task.expectedFiles ?? []),
      graders: task.graders.map((grader, g) =>
        graderFromV2(grader, `tasks[${index}].graders[${g}]`, context),
      ),
      manifestField: `tasks[${index}]`,
      ...(seedFile !== undefined && seed !== undefined
        ? {
            forge: { seedFile, seed, repo: task.forge?.repo ?? V2_DEFAULTS.forgeRepo },
          }
        : {}),
      ...(task.tier === undefined ? {} : { tier: task.tier }),
    };
  });
  const forge = forgeSettingsFromV2(manifest);
  const runtime = runtimeFromV2(manifest.runtime);
  const variants = (manifest.variants ?? []).map((variant, index): VariantSpec => {
    const agent = agentFromV2(variant.agent, context.manifestDir);
    const ownRuntime = variantRuntimeFromV2(variant, runtime);
    const manifestField = context.variantFields?.get(index) ?? `variants[${index}]`;
    return {
      id: variant.id,
      label: variant.id,
      composition: variant.composition,
      ...(variant.harness === undefined
        ? {}
        : {
            harnessFiles: (typeof variant.harness === "string"
              ? [variant.harness]
              : variant.harness
            ).map(at),
          }),
      ...(variant.runtimeProfile === undefined ? {} : { runtimeProfile: variant.runtimeProfile }),
      ...(agent === undefined ? {} : { agent }),
      isBaseline: variant.id === manifest.baseline,
      compositionField: `${manifestField}.composition`,
      manifestField,
      ...(ownRuntime === undefined ? {} : { runtime: ownRuntime }),
    };
  });
  return {
    schemaVersion: manifest.schemaVersion,
    layout: "v2",
    manifestPath: context.manifestPath,
    manifestDir: context.manifestDir,
    harnessFiles: harness.map(at),
    tasks,
    variants,
    baseline: manifest.baseline,
    runtime,
    trials: {
      count: context.trialCount,
      manifestCount: manifest.trials.count,
      seed: manifest.trials.seed,
      order: manifest.trials.order ?? V2_DEFAULTS.trialOrder,
    },
    verdict: verdictFromV2(manifest.verdict),
    concurrency: manifest.concurrency ?? V2_DEFAULTS.concurrency,
    diskBudgetBytes: (manifest.diskBudgetMB ?? V2_DEFAULTS.diskBudgetMB) * 1024 * 1024,
    ...(forge === undefined ? {} : { forge }),
  };
}

/** Valid settings that cannot lead where the author probably wants. */
export function experimentWarnings(experiment: Experiment): InputProblem[] {
  const warnings: InputProblem[] = [];
  const policy = experiment.verdict;
  if (policy.kind !== "paired-v1") return warnings;
  if (policy.design !== "sequential" && experiment.trials.count < policy.minTrials)
    warnings.push({
      path: "trials.count",
      message: `${experiment.trials.count} trial(s) per task × variant is below verdict.minTrials (${policy.minTrials}): this run can end in "need_more_work" at best, never "accept"`,
    });
  else {
    const best = bestPossibleComparison(experiment);
    if (best.status !== "accept")
      warnings.push({
        path: "trials.count",
        message: `${plural(experiment.tasks.length, "task")} × ${plural(experiment.trials.count, "trial")} per variant cannot reach "accept" for any effect: even a candidate that passes every trial against a baseline that fails every one gets p = ${formatP(best.pValue, best.threshold)} > ${formatP(best.threshold, best.pValue)}; \`harness compare plan\` shows how many trials would`,
      });
  }
  return warnings;
}

/**
 * The decision on the most extreme outcome the plan allows: every candidate passes every
 * planned trial and the baseline fails every one.
 */
function bestPossibleComparison(experiment: Experiment): {
  status: string;
  pValue: number;
  threshold: number;
} {
  const order = plannedOrder(experiment);
  const trials = order.map((ref) => assumedTrial(ref, ref.variant !== experiment.baseline));
  const verdict = decideVerdict(trials, {
    baseline: experiment.baseline,
    policy: experiment.verdict,
    variants: experiment.variants.map((v) => v.id),
    tasks: experiment.tasks.map((t) => t.id),
    plannedTrials: experiment.trials.count,
    order,
  });
  const test = verdict.comparisons[0]?.test;
  return {
    status: verdict.comparisons[0]?.status ?? verdict.status,
    pValue: test?.pValue ?? 1,
    threshold: test?.threshold ?? 0,
  };
}

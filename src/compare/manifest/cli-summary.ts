// What `harness compare validate` prints: a short summary of a valid experiment, or every
// problem with its field path. The CLI command only prints this and sets the exit code.
import { relative } from "node:path";
import { type InputProblem, problemCount } from "../../shared/index.js";
import {
  type AgentSpec,
  type Experiment,
  type GraderSpec,
  type RuntimeSpec,
  runtimeOf,
} from "../experiment.js";

function hostAndModel(runtime: RuntimeSpec): { host: string; model: string | null } {
  return {
    host: runtime.host,
    model: runtime.host === "scripted" ? null : (runtime.model ?? null),
  };
}

import { type LoadManifestOptions, loadManifest } from "./load.js";
import { checkOutDir } from "./out-dir.js";

export interface ManifestValidationOptions extends LoadManifestOptions {
  /** Also check a `--out` directory. */
  out?: string;
  /** With `out`: accept a non-empty directory (`--resume`). */
  allowNonEmptyOut?: boolean;
  /**
   * The checks a run makes before its first trial (compositions resolve for the host, graders
   * load, a sandbox can start, the host is installed and has credentials), for a loaded
   * manifest: their problems are the manifest's too, so "valid" means "will start".
   */
  beforeTrials?: (experiment: Experiment) => Promise<InputProblem[]>;
}

export interface ManifestValidationReport {
  ok: boolean;
  /** 0 valid, 1 problems found. */
  exitCode: 0 | 1;
  /** Human-readable lines, newline-terminated. */
  text: string;
  /** The `--json` document. */
  json: {
    ok: boolean;
    manifest: string;
    schemaVersion?: string;
    manifestHash?: string;
    problems: InputProblem[];
    warnings: InputProblem[];
    summary?: {
      host: string;
      tasks: string[];
      variants: Array<{
        id: string;
        composition: string;
        baseline: boolean;
        host: string;
        model: string | null;
      }>;
      trialsPerTaskAndVariant: number;
      totalTrials: number;
      seed: number;
      order: string;
      verdict: string;
      concurrency: number;
    };
  };
  problems: InputProblem[];
  warnings: InputProblem[];
  experiment?: Experiment;
}

function portable(from: string, to: string): string {
  return relative(from, to).split("\\").join("/") || ".";
}

function describeAgent(agent: AgentSpec, base: string): string {
  switch (agent.kind) {
    case "nop":
      return "nop";
    case "oracle":
      return `oracle:${portable(base, agent.patchFile)}`;
    case "module":
      return portable(base, agent.modulePath);
  }
}

function describeGrader(grader: GraderSpec): string {
  switch (grader.kind) {
    case "scope":
      return `scope (${grader.mode})`;
    case "command":
      return `${grader.id} (${grader.argv.join(" ")})`;
    case "tests": {
      const named = grader.failToPass.length + grader.passToPass.length;
      const wants = [
        ...(named > 0 ? [`${named} named test(s)`] : []),
        ...(grader.minTests === undefined ? [] : [`at least ${grader.minTests} test(s)`]),
      ];
      return `${grader.id} (${grader.runner} tests: ${wants.join(", ")}${grader.hidden.length > 0 ? `, ${grader.hidden.length} hidden file(s)` : ""})`;
    }
    case "readme-package-v1":
      return "readme-package-v1";
    case "forge-state":
      return "changes" in grader.source
        ? `forge-state (${grader.source.changes.length} intended change(s))`
        : "forge-state (expected state in full)";
    case "read-facts":
      return `read-facts (${grader.facts.length} fact(s))`;
  }
}

function describeVerdict(experiment: Experiment): string {
  const verdict = experiment.verdict;
  return verdict.kind === "paired-v1"
    ? `paired-v1 (alpha ${verdict.alpha}, minTrials ${verdict.minTrials}, maxCostRatio ${verdict.maxCostRatio})`
    : "heuristic-v1";
}

function describeRuntime(runtime: RuntimeSpec, tools = true): string {
  return runtime.host === "scripted"
    ? `scripted (timeout ${runtime.timeoutMs} ms)`
    : `${runtime.host}${runtime.model === undefined ? "" : ` model ${runtime.model}`} (maxTurns ${runtime.maxTurns}, timeout ${runtime.timeoutMs} ms${tools ? `, tools ${runtime.tools.join(" ")}` : ""})`;
}

function summaryLines(experiment: Experiment): string[] {
  const base = experiment.manifestDir;
  const runtime = experiment.runtime;
  const host = describeRuntime(runtime);
  const lines = [
    `  harness: ${experiment.harnessFiles.map((file) => portable(base, file)).join(", ")}`,
    `  ${experiment.variants.some((v) => v.runtime !== undefined) ? "runtime (unless a variant sets its own)" : "host"}: ${host}; ${runtime.validationCommands.length} allowed validation command(s)`,
    `  tasks (${experiment.tasks.length}):`,
  ];
  for (const task of experiment.tasks) {
    const forge =
      task.forge === undefined
        ? ""
        : `forge seed ${portable(base, task.forge.seedFile)} (${task.forge.seed.issues?.length ?? 0} issues, ${task.forge.seed.pullRequests?.length ?? 0} pull requests), `;
    const tier = task.tier === undefined ? "" : ` [tier ${task.tier}]`;
    lines.push(
      `    ${task.id}${tier}: ${forge}fixture ${portable(base, task.fixtureDir)}, prompt ${portable(base, task.promptFile)}, expected files ${task.expectedFiles.join(" ") || "(none)"}; graders ${task.graders.map(describeGrader).join(", ")}`,
    );
  }
  const forge = experiment.forge;
  if (forge !== undefined)
    lines.push(
      forge.kind === "local"
        ? `  forge: a local forge per trial (the agent acts as ${forge.user}); cli commands ${forge.commands.join(" ") || "(none)"}`
        : `  forge: live, a throwaway repository per trial on ${forge.url} under ${forge.owner} (token in $${forge.tokenEnv}, acting as ${forge.user}); cli commands ${forge.commands.join(" ") || "(none)"}`,
    );
  lines.push(`  variants (${experiment.variants.length}):`);
  for (const variant of experiment.variants) {
    const parts = [
      `composition ${variant.composition}${variant.harnessFiles === undefined ? "" : ` of ${variant.harnessFiles.map((file) => portable(base, file)).join(", ")}`}`,
    ];
    if (variant.runtimeProfile !== undefined) parts.push(`profile ${variant.runtimeProfile}`);
    if (variant.agent !== undefined) parts.push(`agent ${describeAgent(variant.agent, base)}`);
    if (variant.runtime !== undefined) parts.push(`on ${describeRuntime(variant.runtime, false)}`);
    const name = variant.label === variant.id ? variant.id : `${variant.id} (${variant.label})`;
    lines.push(`    ${name}: ${parts.join(", ")}${variant.isBaseline ? " [baseline]" : ""}`);
  }
  const total = experiment.trials.count * experiment.variants.length * experiment.tasks.length;
  const lowered =
    experiment.trials.count < experiment.trials.manifestCount
      ? ` (lowered from ${experiment.trials.manifestCount} by --trials)`
      : "";
  lines.push(
    `  trials: ${experiment.trials.count} per task × variant${lowered} = ${total} runs, seed ${experiment.trials.seed}, ${experiment.trials.order}; concurrency ${experiment.concurrency}`,
  );
  lines.push(`  verdict: ${describeVerdict(experiment)}`);
  return lines;
}

/** Validates a manifest (and optionally `--out`) and renders the result for the CLI. */
export async function validateManifestForCli(
  path: string,
  options: ManifestValidationOptions = {},
): Promise<ManifestValidationReport> {
  const loaded = await loadManifest(path, options);
  const problems = [...loaded.problems];
  if (loaded.ok && options.out !== undefined)
    problems.push(
      ...(await checkOutDir(options.out, loaded.experiment, {
        allowNonEmpty: options.allowNonEmptyOut === true,
      })),
    );
  if (loaded.ok && options.beforeTrials !== undefined)
    problems.push(...(await options.beforeTrials(loaded.experiment)));
  const ok = loaded.ok && problems.length === 0;
  const warnings = loaded.warnings;
  const lines: string[] = [];
  if (ok && loaded.ok) {
    lines.push(`${path}: valid ${loaded.experiment.schemaVersion} manifest`);
    lines.push(...summaryLines(loaded.experiment));
  } else {
    lines.push(`${path}: ${problemCount(problems.length)}`);
    for (const problem of problems) lines.push(`  ${problem.path}: ${problem.message}`);
  }
  for (const warning of warnings) lines.push(`  warning: ${warning.path}: ${warning.message}`);
  const json: ManifestValidationReport["json"] = { ok, manifest: path, problems, warnings };
  if (loaded.ok) {
    const experiment = loaded.experiment;
    json.schemaVersion = experiment.schemaVersion;
    json.manifestHash = loaded.manifestHash;
    json.summary = {
      host: experiment.runtime.host,
      tasks: experiment.tasks.map((task) => task.id),
      variants: experiment.variants.map((variant) => ({
        id: variant.id,
        composition: variant.composition,
        baseline: variant.isBaseline,
        ...hostAndModel(runtimeOf(experiment, variant)),
      })),
      trialsPerTaskAndVariant: experiment.trials.count,
      totalTrials: experiment.trials.count * experiment.variants.length * experiment.tasks.length,
      seed: experiment.trials.seed,
      order: experiment.trials.order,
      verdict: experiment.verdict.kind,
      concurrency: experiment.concurrency,
    };
  }
  return {
    ok,
    exitCode: ok ? 0 : 1,
    text: `${lines.join("\n")}\n`,
    json,
    problems,
    warnings,
    ...(loaded.ok ? { experiment: loaded.experiment } : {}),
  };
}

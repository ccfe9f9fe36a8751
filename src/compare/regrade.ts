// `compare regrade`: re-runs the graders on recorded trials without re-running any agent.
// Each trial's recorded patch is applied to a fresh copy of the frozen fixture, graded,
// and classified with its recorded receipt; the new verdict is written beside the old.
import { copyFile, readdir, readFile, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { type RuntimeReceipt, runtimeReceiptSchema } from "../exec/index.js";
import { type Grade, loadReadmeContract } from "../graders/index.js";
import { type InputProblem, InvalidInputError, readJsonFile, runPool } from "../shared/index.js";
import { applyPatch, createTrialWorkspace, snapshotTree } from "../workspace/index.js";
import {
  frozenTasksSchema,
  runManifestSchema,
  type TrialMetrics,
  trialMetricsSchema,
  VALIDATION_VERSION,
  type VerdictDocument,
  verdictDocumentSchema,
} from "./artifacts-contract.js";
import { assembleExperiment } from "./assemble.js";
import { classifyTrial, type TrialEvidence } from "./classify.js";
import type { TaskSpec } from "./experiment.js";
import { gradeInfrastructureProblem, type PreparedGrader, prepareGraders } from "./graders.js";
import { loadHarnessCatalog, loadManifest } from "./manifest/index.js";
import {
  applyContractOverrides,
  type ContractOverride,
  type GraderContractArg,
  parseGraderContractArg,
  resolveGraderContracts,
} from "./regrade-contracts.js";
import {
  type RegradeContract,
  type RegradeSummary,
  summarizeRegrade,
  type TrialChange,
} from "./regrade-summary.js";
import { createRunLock } from "./run-lock.js";
import { mapStrings } from "./trial.js";
import { buildVerdictDocument, writeVerdictFiles } from "./verdict.js";

export interface RegradeOptions {
  /** Read the manifest from here instead of where the run recorded it. */
  manifestPath?: string;
  /**
   * `--grader-contract` values: `<file>`, `<grader-id>=<file>` or `<task>/<grader-id>=<file>`;
   * the files are read instead of the manifest's contracts.
   */
  graderContracts?: readonly string[];
  /** What relative contract files resolve against (default: the process's working directory). */
  cwd?: string;
  /** Trials graded at once (default: the run's concurrency). */
  concurrency?: number;
  tempParent?: string;
  now?: () => Date;
  onProgress?: (done: number, total: number) => void;
}

export type { RegradeContract, TrialChange };

export interface RegradeResult {
  /** `verdict.regrade-NNN` */
  stem: string;
  previous: VerdictDocument;
  verdict: VerdictDocument;
  /** The trials whose outcome or score changed (also in `summary`). */
  changes: TrialChange[];
  summary: RegradeSummary;
  /** Every contract-taking grader's contract, in task order. */
  contracts: RegradeContract[];
  notes: string[];
}

async function nextStem(outDir: string): Promise<{ stem: string; validationFile: string }> {
  const names = await readdir(outDir);
  let n = 1;
  while (names.includes(`verdict.regrade-${String(n).padStart(3, "0")}.json`)) n += 1;
  const suffix = `regrade-${String(n).padStart(3, "0")}`;
  return { stem: `verdict.${suffix}`, validationFile: `validation.${suffix}.json` };
}

async function parsed<T>(
  path: string,
  schema: { safeParse(v: unknown): { success: true; data: T } | { success: false } },
  what: string,
): Promise<T> {
  const value = await readJsonFile(path);
  const result = schema.safeParse(value);
  if (!result.success)
    throw new InvalidInputError(path, [
      { path: "(root)", message: `not a ${what} written by harnesslab` },
    ]);
  return result.data;
}

export async function regradeRun(
  outDirArg: string,
  options: RegradeOptions = {},
): Promise<RegradeResult> {
  const outDir = resolve(outDirArg);
  const contractArgs = parseContractArgs(options.graderContracts ?? [], options.cwd);
  const now = options.now ?? (() => new Date());
  const startedAt = now().toISOString();
  const runManifest = await parsed(
    join(outDir, "manifest.json"),
    runManifestSchema,
    "run manifest",
  );
  const previous = await parsed(join(outDir, "verdict.json"), verdictDocumentSchema, "verdict");
  const manifestPath = options.manifestPath
    ? resolve(options.manifestPath)
    : runManifest.manifestPath;
  const loaded = await loadManifest(manifestPath, {
    trialsOverride: runManifest.effective.trials,
    loadCatalog: loadHarnessCatalog,
  });
  if (!loaded.ok)
    throw new InvalidInputError(manifestPath, loaded.problems, "cannot load the run's manifest");
  const overrides = resolveGraderContracts(contractArgs, loaded.experiment.tasks);
  if (!overrides.ok)
    throw new InvalidInputError(
      "--grader-contract",
      overrides.problems,
      "cannot re-grade with these contracts",
    );
  await checkContractFiles(overrides.value);
  const experiment = {
    ...loaded.experiment,
    tasks: applyContractOverrides(loaded.experiment.tasks, overrides.value),
  };
  const notes: string[] = [];
  if (`sha256:${loaded.manifestHash}` !== previous.evidence.manifestHash)
    notes.push("the manifest changed since the run (graders or contracts may differ)");

  const assembled = await assembleExperiment(experiment);
  if (!assembled.ok)
    throw new InvalidInputError(manifestPath, assembled.problems, "cannot assemble the variants");
  const assembledVariants = assembled.variants;
  if (assembled.harnessHash !== previous.evidence.harnessHash)
    notes.push("the .harness files changed since the run");

  const fixtureHashes: Record<string, string> = {};
  for (const task of experiment.tasks) {
    const snapshot = await snapshotTree(task.fixtureDir);
    fixtureHashes[task.id] = snapshot.hash;
    if (previous.evidence.fixtureHashes[task.id] !== snapshot.hash) {
      throw new InvalidInputError(manifestPath, [
        {
          path: `${task.manifestField}.fixture`,
          message: `the fixture of task ${task.id} is not the one the run used (hash ${snapshot.hash}, run used ${previous.evidence.fixtureHashes[task.id] ?? "none"}); recorded patches only apply to the original fixture`,
        },
      ]);
    }
  }

  const missing = previous.trials.filter(
    (t) =>
      !experiment.tasks.some((task) => task.id === t.task) ||
      !experiment.variants.some((v) => v.id === t.variant),
  );
  if (missing.length > 0) {
    throw new InvalidInputError(manifestPath, [
      {
        path: "(manifest)",
        message: `the run has trials of ${[...new Set(missing.map((t) => `${t.variant}/${t.task}`))].join(", ")}, which this manifest no longer defines; regrade with the run's tasks and variants`,
      },
    ]);
  }

  const graders = new Map<string, PreparedGrader[]>();
  for (const task of experiment.tasks) graders.set(task.id, await prepareGraders(task));
  const contracts = await describeContracts(outDir, experiment.tasks, graders, overrides.value);
  // A run still writing here, or another regrade choosing the same NNN, must not interleave.
  const lock = createRunLock(outDir, { takeOverStale: false });
  await lock.acquire();
  try {
    return await regradeHoldingLock();
  } finally {
    await lock.release();
  }

  async function regradeHoldingLock(): Promise<RegradeResult> {
    const { stem, validationFile } = await nextStem(outDir);

    // Every recorded trial is read and checked before anything is written.
    const recorded: RecordedTrial[] = [];
    for (const trial of previous.trials) {
      const dir = join(outDir, trial.artifactDir);
      const old = await parsed(join(dir, "metrics.json"), trialMetricsSchema, "trial metrics file");
      const receiptValue = await readJsonFile(join(dir, "runtime-receipt.json")).catch(() => null);
      const receipt = receiptValue === null ? null : runtimeReceiptSchema.safeParse(receiptValue);
      const task = experiment.tasks.find((t) => t.id === trial.task);
      // A trial that never reached grading (infrastructure error before or during the run) keeps its
      // record, and so does one whose patch had secrets or paths masked: it no longer reproduces the trial's files.
      const gradable =
        task !== undefined &&
        receipt?.success === true &&
        (old.infraReason === null || old.infraReason === "grader_failed") &&
        !old.patchRedacted;
      recorded.push({
        dir,
        old,
        regrade: gradable ? { task, receipt: receipt.data } : null,
      });
      if (old.patchRedacted)
        notes.push(
          `${trial.artifactDir}: kept as recorded (its patch.diff had secrets or paths masked)`,
        );
    }

    const metrics: TrialMetrics[] = new Array(recorded.length);
    let done = 0;
    const concurrency = Math.max(1, options.concurrency ?? runManifest.effective.concurrency);
    await runPool(
      recorded.map((_, index) => index),
      concurrency,
      async (index) => {
        const trial = recorded[index] as RecordedTrial;
        metrics[index] = trial.regrade
          ? await regradeTrial(trial.dir, trial.old, trial.regrade, {
              graders: graders.get(trial.regrade.task.id) ?? [],
              validationFile,
              ...(options.tempParent ? { tempParent: options.tempParent } : {}),
            })
          : await keepTrial(trial.dir, trial.old, validationFile);
        done += 1;
        options.onProgress?.(done, recorded.length);
      },
    );

    const built = buildVerdictDocument({
      experiment,
      assembled: assembledVariants,
      metrics,
      fixturesUnchanged: previous.fixturesUnchanged,
      evidence: { ...previous.evidence, fixtureHashes },
      startedAt,
      finishedAt: now().toISOString(),
      regradeOf: "verdict.json",
      retryLimit: previous.infraRetries.limit,
    });
    const summary = summarizeRegrade({
      before: previous.trials,
      after: built.trials,
      variants: experiment.variants.map((v) => v.id),
      baseline: experiment.baseline,
    });
    const verdict: VerdictDocument = {
      ...built,
      resumedTrials: previous.resumedTrials,
      graderContracts: contracts.map(({ runContractHash: _run, ...used }) => used),
      regradeSummary: summary,
    };
    await writeVerdictFiles(outDir, verdict, stem, validationFile);
    return { stem, previous, verdict, changes: summary.changes, summary, contracts, notes };
  }
}

interface RecordedTrial {
  dir: string;
  old: TrialMetrics;
  /** Null when the trial keeps its record. */
  regrade: { task: TaskSpec; receipt: RuntimeReceipt } | null;
}

async function keepTrial(
  dir: string,
  old: TrialMetrics,
  validationFile: string,
): Promise<TrialMetrics> {
  // The new verdict's report reads its own validation file name: give it the recorded checks.
  await copyFile(join(dir, "validation.json"), join(dir, validationFile)).catch(() => {});
  return old;
}

/**
 * Grades one recorded trial again: its patch applied to a fresh fixture copy, the task's graders
 * run, the outcome classified with the recorded receipt. A patch that does not apply or a grader
 * that breaks makes this trial an infrastructure error, never the whole regrade.
 */
async function regradeTrial(
  dir: string,
  old: TrialMetrics,
  { task, receipt }: { task: TaskSpec; receipt: RuntimeReceipt },
  options: { graders: readonly PreparedGrader[]; validationFile: string; tempParent?: string },
): Promise<TrialMetrics> {
  const evidence: TrialEvidence = { receipt };
  const grades: Grade[] = [];
  let error: string | null = null;
  let workspace: Awaited<ReturnType<typeof createTrialWorkspace>> | undefined;
  try {
    workspace = await createTrialWorkspace(
      task.fixtureDir,
      options.tempParent ? { tempParent: options.tempParent } : {},
    );
    const patch = await readFile(join(dir, "patch.diff"));
    if (patch.length > 0) {
      const applied = await applyPatch(workspace.root, patch, { tempDir: workspace.scratchDir });
      if (!applied.ok) throw new Error(`the recorded patch does not apply: ${applied.message}`);
    }
    const finalText = await readFile(join(dir, "response.txt"), "utf8").catch(() => "");
    for (const prepared of options.graders) {
      const grade = await prepared.grader.grade({
        trialRoot: workspace.root,
        changedFiles: old.changedFiles,
        expectedFiles: task.expectedFiles,
        finalText,
      });
      grades.push(grade);
      const problem = gradeInfrastructureProblem(prepared, grade);
      if (problem !== null) throw new Error(`grader ${prepared.id}: ${problem}`);
    }
    evidence.grades = grades;
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    error = workspace ? workspace.scrubPaths(message) : message;
    evidence.harnessFailure = { reason: "grader_failed", message: error };
  } finally {
    await workspace?.cleanup().catch(() => {});
  }
  const classification = classifyTrial(evidence);
  const scrub = (text: string) => (workspace ? workspace.scrubPaths(text) : text);
  const scrubbedGrades = mapStrings(grades, scrub) as Grade[];
  await writeFile(
    join(dir, options.validationFile),
    `${JSON.stringify({ schemaVersion: VALIDATION_VERSION, grades: scrubbedGrades, error }, null, 2)}\n`,
  );
  return {
    ...old,
    outcome: classification.outcome,
    infraReason: classification.infraReason,
    explanation: classification.explanation,
    score: classification.score,
    gradePassed: classification.gradePassed,
    graders: scrubbedGrades.map((g) => ({
      grader: g.grader,
      score: g.score,
      passed: g.passed,
      failedChecks: g.checks.filter((c) => !c.passed).map((c) => c.id),
    })),
  };
}

function parseContractArgs(values: readonly string[], cwd = process.cwd()): GraderContractArg[] {
  const args: GraderContractArg[] = [];
  const problems: InputProblem[] = [];
  for (const value of values) {
    const parsedArg = parseGraderContractArg(value);
    if (parsedArg.ok) args.push({ ...parsedArg.value, file: resolve(cwd, parsedArg.value.file) });
    else problems.push(...parsedArg.problems);
  }
  if (problems.length > 0)
    throw new InvalidInputError(
      "--grader-contract",
      problems,
      "cannot re-grade with these contracts",
    );
  return args;
}

/** Reads every given contract once up front, so a bad one is reported as the option's fault. */
async function checkContractFiles(overrides: readonly ContractOverride[]): Promise<void> {
  for (const override of overrides) {
    try {
      await loadReadmeContract(override.file);
    } catch (error) {
      if (!(error instanceof InvalidInputError)) throw error;
      throw new InvalidInputError(
        override.file,
        error.problems,
        `cannot use the contract given with --grader-contract ${override.given}`,
      );
    }
  }
}

/** The contract each contract-taking grader grades with, beside the one the run used. */
async function describeContracts(
  outDir: string,
  tasks: readonly TaskSpec[],
  prepared: ReadonlyMap<string, readonly PreparedGrader[]>,
  overrides: readonly ContractOverride[],
): Promise<RegradeContract[]> {
  const frozen = frozenTasksSchema.safeParse(
    await readJsonFile(join(outDir, "frozen-task.json")).catch(() => null),
  );
  const contracts: RegradeContract[] = [];
  for (const task of tasks) {
    for (const spec of task.graders) {
      const hash = prepared.get(task.id)?.find((g) => g.id === spec.id)?.contractHash ?? null;
      if (hash === null || spec.kind !== "readme-package-v1") continue;
      const recorded = frozen.success
        ? frozen.data.tasks.find((t) => t.id === task.id)?.graders.find((g) => g.id === spec.id)
        : undefined;
      contracts.push({
        task: task.id,
        grader: spec.id,
        path: spec.contractFile,
        contractHash: hash,
        source: overrides.some((o) => o.task === task.id && o.grader === spec.id)
          ? "option"
          : "manifest",
        runContractHash: recorded?.contractHash ?? null,
      });
    }
  }
  return contracts;
}

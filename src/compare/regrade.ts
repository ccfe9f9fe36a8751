// `compare regrade`: re-runs the graders on recorded trials without re-running any agent.
// Each trial's recorded patch is applied to a fresh copy of the frozen fixture, graded,
// and classified with its recorded receipt; the new verdict is written beside the old.
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { runtimeReceiptSchema } from "../exec/index.js";
import type { Grade } from "../graders/index.js";
import { InvalidInputError, readJsonFile } from "../shared/index.js";
import { applyPatch, createTrialWorkspace, snapshotTree } from "../workspace/index.js";
import {
  runManifestSchema,
  type TrialMetrics,
  trialMetricsSchema,
  VALIDATION_VERSION,
  type VerdictDocument,
  verdictDocumentSchema,
} from "./artifacts-contract.js";
import { assembleExperiment } from "./assemble.js";
import { classifyTrial, type TrialEvidence } from "./classify.js";
import { gradeInfrastructureProblem, prepareGraders } from "./graders.js";
import { loadHarnessCatalog, loadManifest } from "./manifest/index.js";
import { mapStrings } from "./trial.js";
import { buildVerdictDocument, writeVerdictFiles } from "./verdict.js";

export interface RegradeOptions {
  /** Read the manifest from here instead of where the run recorded it. */
  manifestPath?: string;
  tempParent?: string;
  now?: () => Date;
  onProgress?: (done: number, total: number) => void;
}

export interface TrialChange {
  artifactDir: string;
  before: { outcome: string; score: number | null };
  after: { outcome: string; score: number | null };
}

export interface RegradeResult {
  /** `verdict.regrade-NNN` */
  stem: string;
  previous: VerdictDocument;
  verdict: VerdictDocument;
  changes: TrialChange[];
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
  const experiment = loaded.experiment;
  const notes: string[] = [];
  if (`sha256:${loaded.manifestHash}` !== previous.evidence.manifestHash)
    notes.push("the manifest changed since the run (graders or contracts may differ)");

  const assembled = await assembleExperiment(experiment);
  if (!assembled.ok)
    throw new InvalidInputError(manifestPath, assembled.problems, "cannot assemble the variants");
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

  const graders = new Map<string, Awaited<ReturnType<typeof prepareGraders>>>();
  for (const task of experiment.tasks) graders.set(task.id, await prepareGraders(task));
  const { stem, validationFile } = await nextStem(outDir);

  const metrics: TrialMetrics[] = [];
  const changes: TrialChange[] = [];
  let done = 0;
  for (const trial of previous.trials) {
    const dir = join(outDir, trial.artifactDir);
    const old = await parsed(join(dir, "metrics.json"), trialMetricsSchema, "trial metrics file");
    const task = experiment.tasks.find((t) => t.id === trial.task);
    const receiptValue = await readJsonFile(join(dir, "runtime-receipt.json")).catch(() => null);
    const receipt = receiptValue === null ? null : runtimeReceiptSchema.safeParse(receiptValue);
    // A trial that never reached grading (infrastructure error before or during the run) keeps its record.
    if (
      !task ||
      !receipt?.success ||
      (old.infraReason !== null && old.infraReason !== "grader_failed") ||
      // A patch with masked secrets or paths no longer reproduces the trial's files.
      old.patchRedacted
    ) {
      if (old.patchRedacted)
        notes.push(
          `${trial.artifactDir}: kept as recorded (its patch.diff had secrets or paths masked)`,
        );
      metrics.push(old);
      done += 1;
      options.onProgress?.(done, previous.trials.length);
      continue;
    }
    const evidence: TrialEvidence = { receipt: receipt.data };
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
      for (const prepared of graders.get(task.id) ?? []) {
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
      join(dir, validationFile),
      `${JSON.stringify({ schemaVersion: VALIDATION_VERSION, grades: scrubbedGrades, error }, null, 2)}\n`,
    );
    const updated: TrialMetrics = {
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
    metrics.push(updated);
    if (updated.outcome !== old.outcome || updated.score !== old.score) {
      changes.push({
        artifactDir: trial.artifactDir,
        before: { outcome: old.outcome, score: old.score },
        after: { outcome: updated.outcome, score: updated.score },
      });
    }
    done += 1;
    options.onProgress?.(done, previous.trials.length);
  }

  const verdict = buildVerdictDocument({
    experiment,
    assembled: assembled.variants,
    metrics,
    fixturesUnchanged: previous.fixturesUnchanged,
    evidence: { ...previous.evidence, fixtureHashes },
    startedAt,
    finishedAt: now().toISOString(),
    regradeOf: "verdict.json",
    retryLimit: previous.infraRetries.limit,
  });
  await writeVerdictFiles(outDir, verdict, stem, validationFile);
  return { stem, previous, verdict, changes, notes };
}

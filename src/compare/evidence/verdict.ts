// Judging a run (pure) and writing its verdict files (I/O): from finished trials' metrics to
// verdict.json, verdict.md and verdict.html. Used by `compare run` and `compare regrade`.
import { join, resolve } from "node:path";
import {
  type FlipEvidence,
  type TrialMetrics,
  VERDICT_VERSION,
  type VerdictDocument,
  type VerdictTrial,
} from "../../artifacts/index.js";
import { estimatedCostUsd } from "../../hosts/index.js";
import {
  type EvidenceLimits,
  evidenceLimits,
  type HtmlReportOptions,
  htmlReportParts,
  renderMarkdownReport,
  type TrialDetails,
} from "../../report/index.js";
import { isPathInside, writeFileAtomic } from "../../shared/index.js";
import {
  canStopEarly,
  computeVerdictStatistics,
  type StoppingDecision,
  type TrialRecord,
  type VerdictOptions,
  type VerdictStatistics,
  watchSequentialDesign,
} from "../../stats/index.js";
import { type Experiment, runtimeOf } from "../experiment.js";
import type { AssembledVariant } from "../run/assemble.js";
import { calibrationOf } from "../run/calibrate.js";
import { plannedOrder, trialArtifactDir } from "../run/plan.js";
import { readTrialEvidence } from "./trial-evidence.js";

/** What the statistics read of a trial's metrics (a verdict's trial list has it too). */
type RecordedMeasures = Pick<
  TrialMetrics,
  | "variant"
  | "task"
  | "trial"
  | "outcome"
  | "score"
  | "costUsd"
  | "credits"
  | "tokens"
  | "turns"
  | "durationMs"
>;

/**
 * What the statistics read of each trial. A trial whose host reported no USD gets an estimate at
 * its model's list price (docs/statistics.md#cost), so hosts that report differently compare.
 */
function trialRecordsOf(
  experiment: Experiment,
): (metrics: RecordedMeasures & { costEquivalentTokens?: number | null }) => TrialRecord {
  const models = new Map(
    experiment.variants.map((variant) => {
      const runtime = runtimeOf(experiment, variant);
      return [variant.id, runtime.host === "scripted" ? undefined : runtime.model];
    }),
  );
  return (metrics) => {
    const t = metrics.tokens;
    const tokens =
      t === null || Object.values(t).every((v) => v === null)
        ? null
        : {
            uncachedInput: t.uncachedInput ?? 0,
            cacheRead: t.cacheRead ?? 0,
            cacheWrite: t.cacheWrite ?? 0,
            output: t.output ?? 0,
            reasoning: t.reasoning ?? 0,
          };
    const estimate =
      metrics.costUsd === null
        ? estimatedCostUsd(models.get(metrics.variant), metrics.costEquivalentTokens ?? null)
        : null;
    return {
      variant: metrics.variant,
      task: metrics.task,
      trial: metrics.trial,
      outcome: metrics.outcome,
      score: metrics.outcome === "infrastructure_error" ? null : metrics.score,
      costUsd: metrics.costUsd,
      ...(estimate === null ? {} : { estimatedCostUsd: estimate }),
      credits: metrics.credits,
      tokens,
      turns: metrics.turns,
      durationMs: metrics.durationMs,
    };
  };
}

/** Whether the trials so far settle the status whatever the rest would do (--stop-early). */
export function stoppingDecision(
  experiment: Experiment,
  metrics: readonly TrialMetrics[],
): StoppingDecision {
  return canStopEarly(metrics.map(trialRecordsOf(experiment)), verdictOptions(experiment));
}

/**
 * The stopping decision as a run asks it, trial after trial: `check` takes the trials so far,
 * the newest last, and says whether the run may stop. Under the sequential design the tests are
 * fed each trial once and the whole decision is made only when a comparison reached a final
 * state (or every trial is in), so a run of thousands of trials does not recompute the verdict
 * after each one; under --stop-early's fixed design every trial is a look.
 */
export function stoppingCheck(experiment: Experiment): {
  check(metrics: readonly TrialMetrics[]): StoppingDecision | undefined;
} {
  if (!stopsBySequentialDesign(experiment))
    return { check: (metrics) => stoppingDecision(experiment, metrics) };
  const watch = watchSequentialDesign(verdictOptions(experiment));
  const toTrialRecord = trialRecordsOf(experiment);
  let fed = 0;
  return {
    check(metrics) {
      let due = false;
      for (; fed < metrics.length; fed += 1)
        if (watch.record(toTrialRecord(metrics[fed] as TrialMetrics))) due = true;
      return due ? stoppingDecision(experiment, metrics) : undefined;
    },
  };
}

/** What the statistics stage needs to know of the experiment's plan. */
function verdictOptions(experiment: Experiment): VerdictOptions & { plannedTrials: number } {
  return {
    baseline: experiment.baseline,
    policy: experiment.verdict,
    variants: experiment.variants.map((v) => v.id),
    tasks: experiment.tasks.map((t) => t.id),
    plannedTrials: experiment.trials.count,
    order: plannedOrder(experiment),
  };
}

/**
 * When `previous` was decided by a method harnesslab no longer uses (its comparisons carry no
 * deciding test: an interval alone, as earlier versions did), what the current method decides on that
 * verdict's own trials; null when the previous verdict used the current method or the statuses
 * agree.
 */
export function methodChangeOf(
  experiment: Experiment,
  previous: VerdictDocument,
): NonNullable<VerdictDocument["regradeSummary"]>["methodChange"] | null {
  const stats = previous.statistics;
  if (stats === null || stats.policy.kind !== "paired-v1") return null;
  const old = stats.comparisons.find((c) => c.test === undefined && c.interval !== null);
  if (old === undefined || old.interval === null) return null;
  const now = computeVerdictStatistics(
    previous.trials.map(trialRecordsOf(experiment)),
    verdictOptions(experiment),
  );
  if (now.status === stats.status) return null;
  return {
    previousMethod: old.interval.method,
    previousStatus: stats.status,
    statusWithPreviousGrades: now.status,
  };
}

/** The sequential design stops the run by itself; the fixed design only with --stop-early. */
export function stopsBySequentialDesign(experiment: Experiment): boolean {
  return experiment.verdict.kind === "paired-v1" && experiment.verdict.design === "sequential";
}

type SetupSummary = NonNullable<VerdictDocument["variants"][number]["setup"]>;

/** Per component of a variant's setup: in how many trials its host loaded it, and its tools' calls. */
function setupSummary(trials: readonly TrialMetrics[]): { setup?: SetupSummary } {
  const byComponent = new Map<string, SetupSummary[number]>();
  for (const trial of trials)
    for (const entry of trial.setup ?? []) {
      const row = byComponent.get(entry.component) ?? {
        component: entry.component,
        mechanism: entry.mechanism,
        loaded: 0,
        failed: 0,
        unconfirmed: 0,
        notRun: 0,
        toolCalls: 0,
      };
      if (entry.status === "not-run") row.notRun++;
      else row[entry.status]++;
      row.toolCalls += entry.toolCalls;
      byComponent.set(entry.component, row);
    }
  return byComponent.size === 0 ? {} : { setup: [...byComponent.values()] };
}

/** The verdict document from finished trials (also used by regrade). */
export function buildVerdictDocument(input: {
  experiment: Experiment;
  assembled: Map<string, AssembledVariant>;
  metrics: readonly TrialMetrics[];
  fixturesUnchanged: boolean;
  evidence: VerdictDocument["evidence"];
  startedAt: string;
  finishedAt: string;
  regradeOf?: string | null;
  /** The --retry-infra limit the trials ran with (0: no retries). */
  retryLimit?: number;
  /** How the trials' (or the regrade's) commands were contained. */
  containment?: VerdictDocument["containment"];
}): VerdictDocument {
  const { experiment } = input;
  const sorted = [...input.metrics].sort((a, b) => a.seq - b.seq);
  const records = sorted.map(trialRecordsOf(experiment));
  const statistics = computeVerdictStatistics(records, verdictOptions(experiment));
  const calibration = calibrationOf(experiment, records, verdictOptions(experiment));
  const status = input.fixturesUnchanged ? statistics.status : "infrastructure_error";
  const reason = input.fixturesUnchanged
    ? statistics.reason
    : "a source fixture changed during the run, so no verdict is given (the trials' evidence is kept)";
  const trials: VerdictTrial[] = sorted.map(
    ({ schemaVersion: _s, graders: _g, seal: _seal, ...rest }) => ({
      ...rest,
      artifactDir: trialArtifactDir(experiment, rest.variant, rest.task, rest.trial),
    }),
  );
  const flips = flipEvidence(statistics, trials);
  return {
    schemaVersion: VERDICT_VERSION,
    status,
    reason,
    host: experiment.runtime.host,
    baseline: experiment.baseline,
    variants: experiment.variants.map((variant) => {
      const assembled = input.assembled.get(variant.id);
      const runtime = runtimeOf(experiment, variant);
      return {
        id: variant.id,
        label: variant.label,
        composition: variant.composition,
        runtimeProfile: variant.runtimeProfile ?? null,
        isBaseline: variant.isBaseline,
        revisionId: assembled?.revision.revisionId ?? "",
        resolutionStatus: assembled?.report.status ?? "unknown",
        degraded: assembled?.degraded ?? [],
        host: runtime.host,
        model: runtime.host === "scripted" ? null : (runtime.model ?? null),
        maxTurns: runtime.host === "scripted" ? null : runtime.maxTurns,
        ...(experiment.forge !== undefined && assembled !== undefined
          ? {
              forgeAccess: assembled.forgeArm.access,
              ...(assembled.forgeArm.tool === undefined
                ? {}
                : { forgeTool: { ...assembled.forgeArm.tool } }),
              ...(assembled.forgeArm.access === "cli"
                ? { forgeCommands: [...experiment.forge.commands] }
                : {}),
              ...(assembled.forgeArm.only ? { forgeOnly: true } : {}),
            }
          : {}),
        ...setupSummary(sorted.filter((m) => m.variant === variant.id)),
      };
    }),
    tasks: experiment.tasks.map((t) => t.id),
    ...(experiment.tasks.some((t) => t.tier !== undefined)
      ? {
          taskTiers: Object.fromEntries(
            experiment.tasks.flatMap((t) => (t.tier === undefined ? [] : [[t.id, t.tier]])),
          ),
        }
      : {}),
    trialsPerCell: experiment.trials.count,
    fixturesUnchanged: input.fixturesUnchanged,
    ...(input.containment === undefined ? {} : { containment: input.containment }),
    rejectedRecords: [],
    evidence: input.evidence,
    statistics,
    trials,
    startedAt: input.startedAt,
    finishedAt: input.finishedAt,
    infraRetries: summarizeRetries(sorted, input.retryLimit ?? 0),
    interrupted: false,
    stoppedEarly: false,
    resumedTrials: 0,
    cachedTrials: 0,
    regradeOf: input.regradeOf ?? null,
    flips,
    ...(calibration === null ? {} : { calibration }),
  };
}

/** Each flipped task of each comparison with both variants' trials on it, in trial order. */
export function flipEvidence(
  statistics: VerdictStatistics,
  trials: readonly VerdictTrial[],
): FlipEvidence[] {
  return statistics.comparisons.flatMap((c) =>
    c.flippedTasks.map((f) => ({
      variant: c.variant,
      baseline: c.baseline,
      task: f.task,
      direction: f.direction,
      variantPassRate: f.variantPassRate,
      baselinePassRate: f.baselinePassRate,
      trials: [c.variant, c.baseline].flatMap((variant) =>
        trials
          .filter((t) => t.variant === variant && t.task === f.task)
          .sort((a, b) => a.trial - b.trial)
          .map((t) => ({
            variant,
            trial: t.trial,
            seq: t.seq,
            outcome: t.outcome,
            score: t.score,
            artifactDir: t.artifactDir,
          })),
      ),
    })),
  );
}

function summarizeRetries(
  metrics: readonly TrialMetrics[],
  limit: number,
): VerdictDocument["infraRetries"] {
  const retried = metrics.filter((m) => m.retriedAttempts.length > 0);
  const costs = retried.flatMap((m) =>
    m.retriedAttempts.flatMap((a) => (a.costUsd === null ? [] : [a.costUsd])),
  );
  return {
    limit,
    trialsRetried: retried.length,
    extraAttempts: retried.reduce((sum, m) => sum + m.retriedAttempts.length, 0),
    recovered: retried.filter((m) => m.outcome !== "infrastructure_error").length,
    extraCostUsd: costs.length === 0 ? null : costs.reduce((a, b) => a + b, 0),
  };
}

/**
 * Reads what the HTML report shows of each trial from its folder, within the page's per-trial
 * limits (see trial-evidence.ts: huge files are read in part). A missing or unreadable file shows
 * as empty. Everything read here is untrusted (the renderer escapes it). Holds every trial's
 * excerpt at once: `renderVerdictHtml` reads one trial at a time instead.
 */
export async function loadTrialDetails(
  outDir: string,
  verdict: VerdictDocument,
  validationFile = "validation.json",
): Promise<Map<string, TrialDetails>> {
  const limits = evidenceLimits(verdict.trials.length);
  const details = new Map<string, TrialDetails>();
  for (const trial of verdict.trials) {
    const read = await readTrialFolder(outDir, trial, limits, validationFile);
    if (read !== undefined) details.set(trial.artifactDir, read);
  }
  return details;
}

/** A verdict file can be edited by hand: a folder outside the run is not read (the page says so). */
async function readTrialFolder(
  outDir: string,
  trial: VerdictTrial,
  limits: EvidenceLimits,
  validationFile: string,
): Promise<TrialDetails | undefined> {
  const folder = resolve(outDir, trial.artifactDir);
  if (!isPathInside(resolve(outDir), folder) || folder === resolve(outDir)) return undefined;
  return readTrialEvidence(folder, limits, validationFile);
}

/**
 * verdict.html from the run's folder, the same text as `renderHtmlReport(verdict,
 * await loadTrialDetails(…))`, but each trial's files are read just before its part of the page
 * is rendered, so memory holds the page and one trial's excerpt, however many trials there are.
 */
export async function renderVerdictHtml(
  outDir: string,
  verdict: VerdictDocument,
  validationFile = "validation.json",
  options: HtmlReportOptions = {},
): Promise<string> {
  const parts = htmlReportParts(verdict, options);
  const page = [parts.head];
  for (const trial of parts.trials) {
    page.push(
      parts.evidence(trial, await readTrialFolder(outDir, trial, parts.limits, validationFile)),
    );
  }
  page.push(parts.tail);
  return page.join("\n");
}

/** Writes `<stem>.json`, `<stem>.md` and `<stem>.html` for a verdict. */
export async function writeVerdictFiles(
  outDir: string,
  verdict: VerdictDocument,
  stem = "verdict",
  validationFile = "validation.json",
): Promise<void> {
  // Each file is whole or absent, whenever the process dies (a resumed run writes them again).
  await writeFileAtomic(join(outDir, `${stem}.json`), `${JSON.stringify(verdict, null, 2)}\n`);
  await writeFileAtomic(join(outDir, `${stem}.md`), renderMarkdownReport(verdict));
  await writeFileAtomic(
    join(outDir, `${stem}.html`),
    await renderVerdictHtml(outDir, verdict, validationFile),
  );
}

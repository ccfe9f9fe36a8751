// Judging a run (pure) and writing its verdict files (I/O): from finished trials' metrics to
// verdict.json, verdict.md and verdict.html. Used by `compare run` and `compare regrade`.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import {
  renderHtmlReport,
  renderMarkdownReport,
  type TrialDecision,
  type TrialDetails,
} from "../report/index.js";
import { writeFileAtomic } from "../shared/index.js";
import { computeVerdictStatistics, type TrialRecord } from "../stats/index.js";
import {
  type TrialMetrics,
  VERDICT_VERSION,
  type VerdictDocument,
  type VerdictTrial,
  validationDocumentSchema,
} from "./artifacts-contract.js";
import type { AssembledVariant } from "./assemble.js";
import type { Experiment } from "./experiment.js";
import { trialArtifactDir } from "./plan.js";

export function toTrialRecord(metrics: TrialMetrics): TrialRecord {
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
  return {
    variant: metrics.variant,
    task: metrics.task,
    trial: metrics.trial,
    outcome: metrics.outcome,
    score: metrics.outcome === "infrastructure_error" ? null : metrics.score,
    costUsd: metrics.costUsd,
    credits: metrics.credits,
    tokens,
    turns: metrics.turns,
    durationMs: metrics.durationMs,
  };
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
}): VerdictDocument {
  const { experiment } = input;
  const sorted = [...input.metrics].sort((a, b) => a.seq - b.seq);
  const statistics = computeVerdictStatistics(sorted.map(toTrialRecord), {
    baseline: experiment.baseline,
    policy: experiment.verdict,
    variants: experiment.variants.map((v) => v.id),
    tasks: experiment.tasks.map((t) => t.id),
  });
  const status = input.fixturesUnchanged ? statistics.status : "infrastructure_error";
  const reason = input.fixturesUnchanged
    ? statistics.reason
    : "a source fixture changed during the run, so no verdict is given (the trials' evidence is kept)";
  const trials: VerdictTrial[] = sorted.map(({ schemaVersion: _s, graders: _g, ...rest }) => ({
    ...rest,
    artifactDir: trialArtifactDir(experiment, rest.variant, rest.task, rest.trial),
  }));
  return {
    schemaVersion: VERDICT_VERSION,
    status,
    reason,
    host: experiment.runtime.host,
    baseline: experiment.baseline,
    variants: experiment.variants.map((variant) => {
      const assembled = input.assembled.get(variant.id);
      return {
        id: variant.id,
        label: variant.label,
        composition: variant.composition,
        runtimeProfile: variant.runtimeProfile ?? null,
        isBaseline: variant.isBaseline,
        revisionId: assembled?.revision.revisionId ?? "",
        resolutionStatus: assembled?.report.status ?? "unknown",
        degraded: assembled?.degraded ?? [],
      };
    }),
    tasks: experiment.tasks.map((t) => t.id),
    trialsPerCell: experiment.trials.count,
    fixturesUnchanged: input.fixturesUnchanged,
    evidence: input.evidence,
    statistics,
    trials,
    startedAt: input.startedAt,
    finishedAt: input.finishedAt,
    infraRetries: summarizeRetries(sorted, input.retryLimit ?? 0),
    interrupted: false,
    resumedTrials: 0,
    regradeOf: input.regradeOf ?? null,
  };
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
 * Reads what the HTML report shows of each trial from its folder. A missing or unreadable file
 * shows as empty: the report renders whatever evidence is left. Everything read here is untrusted
 * (the renderer escapes it); odd shapes in permission-decisions.json are read field by field.
 */
export async function loadTrialDetails(
  outDir: string,
  verdict: VerdictDocument,
  validationFile = "validation.json",
): Promise<Map<string, TrialDetails>> {
  const details = new Map<string, TrialDetails>();
  const text = (dir: string, name: string) =>
    readFile(join(outDir, dir, name), "utf8").catch(() => "");
  for (const trial of verdict.trials) {
    const dir = trial.artifactDir;
    const [patch, response, stderr, trace, decisionsText, validationText] = await Promise.all([
      text(dir, "patch.diff"),
      text(dir, "response.txt"),
      text(dir, "stderr.txt"),
      text(dir, "trace.jsonl"),
      text(dir, "permission-decisions.json"),
      text(dir, validationFile),
    ]);
    const decisions = (safeJson(decisionsText) as { decisions?: unknown } | undefined)?.decisions;
    const validation = validationDocumentSchema.safeParse(safeJson(validationText));
    details.set(dir, {
      patch,
      response,
      stderr,
      trace,
      decisions: Array.isArray(decisions) ? decisions.map(readDecision) : [],
      checks: validation.success
        ? validation.data.grades.flatMap((g) =>
            g.checks.map((c) => ({
              grader: g.grader,
              id: c.id,
              passed: c.passed,
              detail: c.detail,
            })),
          )
        : [],
    });
  }
  return details;
}

function readDecision(value: unknown): TrialDecision {
  const record = (typeof value === "object" && value !== null ? value : {}) as Record<
    string,
    unknown
  >;
  const text = (key: string) => (typeof record[key] === "string" ? (record[key] as string) : "");
  return {
    seq: typeof record.seq === "number" ? record.seq : null,
    tool: text("tool"),
    decision: text("decision"),
    rule: text("rule"),
    reason: text("reason"),
    inputSummary: text("inputSummary"),
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
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
  const details = await loadTrialDetails(outDir, verdict, validationFile);
  await writeFileAtomic(join(outDir, `${stem}.html`), renderHtmlReport(verdict, details));
}

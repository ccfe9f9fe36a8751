// Hand-built verdict documents for the renderer tests: trials are described by outcome (and
// optionally cost, tokens, turns, retried attempts) and the statistics come from the real stats
// stage, so the pages show what a run would show.
import { flipEvidence, type VerdictDocument, type VerdictTrial } from "../../src/compare/index.js";
import { computeVerdictStatistics, type TrialRecord } from "../../src/stats/index.js";

export interface TrialSpec {
  variant: string;
  task: string;
  outcome: VerdictTrial["outcome"];
  score?: number;
  costUsd?: number | null;
  tokens?: VerdictTrial["tokens"];
  turns?: number | null;
  explanation?: string;
  changedFiles?: string[];
  infraReason?: VerdictTrial["infraReason"];
  retriedAttempts?: VerdictTrial["retriedAttempts"];
}

const HASH = `sha256:${"0".repeat(64)}`;

export function buildVerdict(
  specs: readonly TrialSpec[],
  options: {
    variants?: string[];
    tasks?: string[];
    baseline?: string;
    retryLimit?: number;
    degraded?: Record<string, string[]>;
  } = {},
): VerdictDocument {
  const variants = options.variants ?? [...new Set(specs.map((s) => s.variant))];
  const tasks = options.tasks ?? [...new Set(specs.map((s) => s.task))];
  const baseline = options.baseline ?? variants[0]!;
  const counters = new Map<string, number>();
  const trials: VerdictTrial[] = specs.map((spec, index) => {
    const key = `${spec.variant}/${spec.task}`;
    const trial = (counters.get(key) ?? 0) + 1;
    counters.set(key, trial);
    const infra = spec.outcome === "infrastructure_error";
    return {
      task: spec.task,
      variant: spec.variant,
      trial,
      seq: index + 1,
      outcome: spec.outcome,
      infraReason: infra ? (spec.infraReason ?? "network_unreachable") : null,
      explanation:
        spec.explanation ??
        (spec.outcome === "passed"
          ? "all graders passed"
          : infra
            ? "the network was unreachable"
            : "failed checks: check/check"),
      receiptStatus: infra ? "infra_error" : "completed",
      score: infra ? null : (spec.score ?? (spec.outcome === "passed" ? 100 : 50)),
      gradePassed: infra ? null : spec.outcome === "passed",
      changedFiles: spec.changedFiles ?? ["src/value.txt"],
      patchBytes: 120,
      patchRedacted: false,
      durationMs: 1500 + index * 10,
      agentWallTimeMs: 1200,
      tokens: spec.tokens ?? null,
      costUsd: spec.costUsd ?? null,
      credits: null,
      turns: spec.turns ?? null,
      costEquivalentTokens: null,
      toolUse: null,
      toolCalls: null,
      permissionDenials: 0,
      retriedAttempts: spec.retriedAttempts ?? [],
      artifactDir: `${spec.variant}/${spec.task}/trial-${String(trial).padStart(3, "0")}`,
    };
  });
  const records: TrialRecord[] = trials.map((t) => ({
    variant: t.variant,
    task: t.task,
    trial: t.trial,
    outcome: t.outcome,
    score: t.score,
    costUsd: t.costUsd,
    credits: null,
    tokens:
      t.tokens === null
        ? null
        : {
            uncachedInput: t.tokens.uncachedInput ?? 0,
            cacheRead: t.tokens.cacheRead ?? 0,
            cacheWrite: t.tokens.cacheWrite ?? 0,
            output: t.tokens.output ?? 0,
            reasoning: t.tokens.reasoning ?? 0,
          },
    turns: t.turns,
    durationMs: t.durationMs,
  }));
  const statistics = computeVerdictStatistics(records, {
    baseline,
    policy: { kind: "paired-v1", alpha: 0.05, minTrials: 2, maxCostRatio: 1.25 },
    variants,
    tasks,
  });
  const retried = trials.filter((t) => t.retriedAttempts.length > 0);
  return {
    schemaVersion: "harnesslab.verdict.v1",
    rejectedRecords: [],
    status: statistics.status,
    reason: statistics.reason,
    host: "scripted",
    baseline,
    variants: variants.map((id) => ({
      id,
      label: id,
      composition: `${id}-composition`,
      runtimeProfile: null,
      isBaseline: id === baseline,
      revisionId: `hr_${id}`,
      resolutionStatus: "ok",
      degraded: options.degraded?.[id] ?? [],
    })),
    tasks,
    trialsPerCell: Math.max(...counters.values()),
    fixturesUnchanged: true,
    evidence: {
      manifestHash: HASH,
      harnessHash: HASH,
      fixtureHashes: Object.fromEntries(tasks.map((t) => [t, HASH])),
    },
    statistics,
    trials,
    flips: flipEvidence(statistics, trials),
    startedAt: "2026-01-01T00:00:00.000Z",
    finishedAt: "2026-01-01T00:01:00.000Z",
    infraRetries: {
      limit: options.retryLimit ?? 0,
      trialsRetried: retried.length,
      extraAttempts: retried.reduce((sum, t) => sum + t.retriedAttempts.length, 0),
      recovered: retried.filter((t) => t.outcome !== "infrastructure_error").length,
      extraCostUsd: null,
    },
    interrupted: false,
    stoppedEarly: false,
    resumedTrials: 0,
    cachedTrials: 0,
    regradeOf: null,
  };
}

/** `n` trials of one variant on one task with the given outcomes in order. */
export function cell(
  variant: string,
  task: string,
  outcomes: string,
  extra: Partial<TrialSpec> = {},
): TrialSpec[] {
  const byLetter: Record<string, TrialSpec["outcome"]> = {
    p: "passed",
    f: "failed",
    i: "infrastructure_error",
  };
  return [...outcomes].map((letter) => ({
    variant,
    task,
    outcome: byLetter[letter]!,
    ...extra,
  }));
}

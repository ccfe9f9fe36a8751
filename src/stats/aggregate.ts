// Per variant × task and per variant summaries of trial records. Nothing is rounded and
// nothing unreported is invented: a measurement no trial reported is null, not 0.
import type {
  Aggregates,
  AmountSummary,
  CellAggregate,
  DurationSummary,
  PassAtKCurves,
  PassAtKPoint,
  RateInterval,
  RateSummary,
  TokenSummary,
  TokenUsage,
  TrialRecord,
  VariantAggregate,
} from "./contract.js";
import { wilsonInterval } from "./intervals.js";
import { type Layout, type LayoutOptions, layoutOf } from "./layout.js";
import { passAtKCurve } from "./pass-at-k.js";

const isCompleted = (t: TrialRecord) => t.outcome !== "infrastructure_error";

function mean(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  return values.reduce((a, b) => a + b, 0) / values.length;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

function amountSummary(
  trials: readonly TrialRecord[],
  pick: (t: TrialRecord) => number | null,
): AmountSummary | null {
  const reported = trials.filter((t) => pick(t) !== null);
  if (reported.length === 0) return null;
  const completed = reported.filter(isCompleted).map((t) => pick(t) as number);
  return {
    total: reported.reduce((sum, t) => sum + (pick(t) as number), 0),
    trialsReporting: reported.length,
    meanPerCompletedTrial: mean(completed),
    completedTrialsReporting: completed.length,
  };
}

const TOKEN_FIELDS = ["uncachedInput", "cacheRead", "cacheWrite", "output", "reasoning"] as const;

function sumTokens(usages: readonly TokenUsage[]): TokenUsage {
  const total: TokenUsage = {
    uncachedInput: 0,
    cacheRead: 0,
    cacheWrite: 0,
    output: 0,
    reasoning: 0,
  };
  for (const usage of usages) for (const field of TOKEN_FIELDS) total[field] += usage[field];
  return total;
}

function tokenSummary(trials: readonly TrialRecord[]): TokenSummary | null {
  const reported = trials.filter((t) => t.tokens !== null);
  if (reported.length === 0) return null;
  const completed = reported.filter(isCompleted).map((t) => t.tokens as TokenUsage);
  let meanPerCompletedTrial: TokenUsage | null = null;
  if (completed.length > 0) {
    meanPerCompletedTrial = sumTokens(completed);
    for (const field of TOKEN_FIELDS) meanPerCompletedTrial[field] /= completed.length;
  }
  return {
    total: sumTokens(reported.map((t) => t.tokens as TokenUsage)),
    trialsReporting: reported.length,
    meanPerCompletedTrial,
    completedTrialsReporting: completed.length,
  };
}

function durationSummary(trials: readonly TrialRecord[]): DurationSummary | null {
  const durations = trials
    .filter((t) => isCompleted(t) && t.durationMs !== null)
    .map((t) => t.durationMs as number);
  if (durations.length === 0) return null;
  return {
    meanMs: mean(durations) as number,
    medianMs: median(durations),
    completedTrialsReporting: durations.length,
  };
}

const RATE_INTERVAL_LEVEL = 0.95;

function passRateInterval(passed: number, completed: number): RateInterval | null {
  if (completed === 0) return null;
  const { lower, upper } = wilsonInterval(passed, completed, 1 - RATE_INTERVAL_LEVEL);
  return { lower, upper, level: RATE_INTERVAL_LEVEL, method: "wilson" };
}

/** Counts and metrics shared by a cell and a variant (over whatever trials are given). */
function summarize(trials: readonly TrialRecord[]) {
  const completed = trials.filter(isCompleted);
  const passed = trials.filter((t) => t.outcome === "passed").length;
  const infraErrors = trials.length - completed.length;
  const passRate: RateSummary = {
    excludingInfra: completed.length === 0 ? null : passed / completed.length,
    infraAsFailure: trials.length === 0 ? null : passed / trials.length,
  };
  return {
    trials: trials.length,
    completed: completed.length,
    passed,
    failed: completed.length - passed,
    infraErrors,
    passRate,
    passRateInterval: passRateInterval(passed, completed.length),
    meanScore: mean(completed.filter((t) => t.score !== null).map((t) => t.score as number)),
    costUsd: amountSummary(trials, (t) => t.costUsd),
    usdWithEstimates: amountSummary(trials, (t) => t.costUsd ?? t.estimatedCostUsd ?? null),
    credits: amountSummary(trials, (t) => t.credits),
    tokens: tokenSummary(trials),
    meanTurns: mean(completed.filter((t) => t.turns !== null).map((t) => t.turns as number)),
    duration: durationSummary(trials),
  };
}

function cellAggregate(layout: Layout, variant: string, task: string): CellAggregate {
  const trials = layout.trialsOf(variant, task);
  const summary = summarize(trials);
  return {
    variant,
    task,
    ...summary,
    passAtK: {
      excludingInfra: passAtKCurve(summary.completed, summary.passed),
      infraAsFailure: passAtKCurve(summary.trials, summary.passed),
    },
  };
}

/** Pointwise mean of per-task curves, for k up to the shortest non-empty curve. */
function meanCurve(curves: readonly PassAtKPoint[][]): PassAtKPoint[] {
  const present = curves.filter((c) => c.length > 0);
  if (present.length === 0) return [];
  const length = Math.min(...present.map((c) => c.length));
  const out: PassAtKPoint[] = [];
  for (let i = 0; i < length; i++) {
    const points = present.map((c) => c[i] as PassAtKPoint);
    out.push({
      k: i + 1,
      passAtK: mean(points.map((p) => p.passAtK)) as number,
      passHatK: mean(points.map((p) => p.passHatK)) as number,
    });
  }
  return out;
}

function meanOfDefined(values: readonly (number | null)[]): number | null {
  return mean(values.filter((v): v is number => v !== null));
}

function variantAggregate(
  variant: string,
  cells: readonly CellAggregate[],
  layout: Layout,
): VariantAggregate {
  const trials = layout.tasks.flatMap((task) => layout.trialsOf(variant, task));
  const curves: PassAtKCurves = {
    excludingInfra: meanCurve(cells.map((c) => c.passAtK.excludingInfra)),
    infraAsFailure: meanCurve(cells.map((c) => c.passAtK.infraAsFailure)),
  };
  return {
    variant,
    tasks: cells.length,
    ...summarize(trials),
    taskMeanPassRate: {
      excludingInfra: meanOfDefined(cells.map((c) => c.passRate.excludingInfra)),
      infraAsFailure: meanOfDefined(cells.map((c) => c.passRate.infraAsFailure)),
    },
    passAtK: curves,
  };
}

export function aggregateLayout(layout: Layout): Aggregates {
  const cells: CellAggregate[] = [];
  const variants: VariantAggregate[] = [];
  for (const variant of layout.variants) {
    const own = layout.tasks.map((task) => cellAggregate(layout, variant, task));
    cells.push(...own);
    variants.push(variantAggregate(variant, own, layout));
  }
  return { variants, cells };
}

/**
 * Summaries per variant × task (`cells`) and per variant over all its tasks (`variants`),
 * both sorted by name. Pass rates come with infrastructure errors excluded and counted as
 * failures; means are over completed trials; totals over every trial that reported a value.
 */
export function aggregate(trials: readonly TrialRecord[], options: LayoutOptions = {}): Aggregates {
  return aggregateLayout(layoutOf(trials, options));
}

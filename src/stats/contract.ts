// Shapes of the statistics stage: what it reads (trial records, a verdict policy) and what it
// returns (aggregates, comparisons, the verdict). One zod definition per shape gives the type,
// runtime validation and the published JSON Schema (`verdict-statistics`).
import { z } from "zod";

const count = z.int().min(0);
const amount = z.number().min(0);
/** A proportion in [0, 1], or null when there is nothing to divide by. */
const rate = z.number().min(0).max(1).nullable();

// ── input ──────────────────────────────────────────────────────────────────────────────────

const outcomeSchema = z.enum(["passed", "failed", "infrastructure_error"]);
export type Outcome = z.infer<typeof outcomeSchema>;

const tokenUsageSchema = z.strictObject({
  uncachedInput: amount,
  cacheRead: amount,
  cacheWrite: amount,
  output: amount,
  reasoning: amount,
});
export type TokenUsage = z.infer<typeof tokenUsageSchema>;

/** One finished trial as the runner classified it. Unreported measurements are null, never 0. */
export const trialRecordSchema = z.strictObject({
  variant: z.string().min(1),
  task: z.string().min(1),
  /** 1-based index of the trial within its variant × task cell. */
  trial: z.int().min(1),
  outcome: outcomeSchema,
  /** Grade 0–100; null for infrastructure errors (they were never graded). */
  score: z.number().min(0).max(100).nullable(),
  costUsd: amount.nullable(),
  /**
   * USD at list prices, from the trial's tokens and its model's price (docs/statistics.md), for a
   * trial whose host reported no USD; null or absent otherwise.
   */
  estimatedCostUsd: amount.nullable().optional(),
  credits: amount.nullable(),
  tokens: tokenUsageSchema.nullable(),
  turns: count.nullable(),
  durationMs: amount.nullable(),
});
export type TrialRecord = z.infer<typeof trialRecordSchema>;

const pairedPolicySchema = z.strictObject({
  kind: z.literal("paired-v1"),
  /** Two-sided significance level; the interval's confidence level is 1 − alpha. */
  alpha: z.number().gt(0).lt(1),
  /** Completed (non-infrastructure) trials each compared variant needs on every task to accept. */
  minTrials: z.int().min(1),
  /** Highest allowed candidate ÷ baseline mean cost per completed trial. */
  maxCostRatio: z.number().positive(),
  /**
   * `fixed` (the default when absent): one test once every planned trial is in. `sequential`:
   * a group-sequential test looked at after every pair of trials, which stops as soon as a
   * boundary is crossed (docs/statistics.md).
   */
  design: z.enum(["fixed", "sequential"]).optional(),
});
const heuristicPolicySchema = z.strictObject({ kind: z.literal("heuristic-v1") });
export const verdictPolicySchema = z.discriminatedUnion("kind", [
  pairedPolicySchema,
  heuristicPolicySchema,
]);
export type PairedPolicy = z.infer<typeof pairedPolicySchema>;
export type HeuristicPolicy = z.infer<typeof heuristicPolicySchema>;
export type VerdictPolicy = z.infer<typeof verdictPolicySchema>;

export const DEFAULT_PAIRED_POLICY: PairedPolicy = Object.freeze({
  kind: "paired-v1",
  alpha: 0.05,
  minTrials: 5,
  maxCostRatio: 1.25,
});

// ── aggregates ─────────────────────────────────────────────────────────────────────────────

/** A pass rate two ways: infrastructure errors left out, and counted as failures. */
const rateSummarySchema = z.strictObject({
  excludingInfra: rate,
  infraAsFailure: rate,
});
export type RateSummary = z.infer<typeof rateSummarySchema>;

/**
 * A reported amount (USD, credits). `total` sums every trial that reported it, infrastructure
 * errors included (the money was spent); the mean is per completed trial that reported it.
 */
const amountSummarySchema = z.strictObject({
  total: amount,
  trialsReporting: count,
  meanPerCompletedTrial: amount.nullable(),
  completedTrialsReporting: count,
});
export type AmountSummary = z.infer<typeof amountSummarySchema>;

const tokenSummarySchema = z.strictObject({
  total: tokenUsageSchema,
  trialsReporting: count,
  meanPerCompletedTrial: tokenUsageSchema.nullable(),
  completedTrialsReporting: count,
});
export type TokenSummary = z.infer<typeof tokenSummarySchema>;

const durationSummarySchema = z.strictObject({
  meanMs: amount,
  medianMs: amount,
  completedTrialsReporting: count,
});
export type DurationSummary = z.infer<typeof durationSummarySchema>;

/** pass@k (at least one of k attempts passes) and pass^k (all k pass), unbiased estimates. */
const passAtKPointSchema = z.strictObject({
  k: z.int().min(1),
  passAtK: z.number().min(0).max(1),
  passHatK: z.number().min(0).max(1),
});
export type PassAtKPoint = z.infer<typeof passAtKPointSchema>;

const passAtKCurvesSchema = z.strictObject({
  /** n = completed trials, c = passed trials. */
  excludingInfra: z.array(passAtKPointSchema),
  /** n = all trials, c = passed trials. */
  infraAsFailure: z.array(passAtKPointSchema),
});
export type PassAtKCurves = z.infer<typeof passAtKCurvesSchema>;

/** A 95% Wilson score interval for a pass rate over completed trials (infrastructure errors left out). */
const rateIntervalSchema = z.strictObject({
  lower: z.number().min(0).max(1),
  upper: z.number().min(0).max(1),
  level: z.number().gt(0).lt(1),
  method: z.literal("wilson"),
});
export type RateInterval = z.infer<typeof rateIntervalSchema>;

const trialCountsShape = {
  trials: count,
  /** Trials that were not infrastructure errors (passed + failed). */
  completed: count,
  passed: count,
  failed: count,
  infraErrors: count,
  passRate: rateSummarySchema,
  /** Interval for `passRate.excludingInfra`; null with no completed trial. */
  passRateInterval: rateIntervalSchema.nullable(),
  /** Mean grade over completed trials that have one. */
  meanScore: z.number().min(0).max(100).nullable(),
  costUsd: amountSummarySchema.nullable(),
  /**
   * USD as reported, or estimated at list prices where the host reported none: what makes hosts
   * that report differently comparable (absent in verdicts written before it existed).
   */
  usdWithEstimates: amountSummarySchema.nullable().optional(),
  credits: amountSummarySchema.nullable(),
  tokens: tokenSummarySchema.nullable(),
  /** Mean turns per completed trial that reported them. */
  meanTurns: amount.nullable(),
  duration: durationSummarySchema.nullable(),
};

/** One variant on one task. */
const cellAggregateSchema = z.strictObject({
  variant: z.string(),
  task: z.string(),
  ...trialCountsShape,
  passAtK: passAtKCurvesSchema,
});
export type CellAggregate = z.infer<typeof cellAggregateSchema>;

/** One variant over all tasks: counts and metrics pooled over its trials. */
const variantAggregateSchema = z.strictObject({
  variant: z.string(),
  tasks: count,
  ...trialCountsShape,
  /** Mean over tasks of each task's pass rate (every task weighs the same). */
  taskMeanPassRate: rateSummarySchema,
  /** Mean over tasks of each task's pass@k / pass^k, for k up to the smallest task's n. */
  passAtK: passAtKCurvesSchema,
});
export type VariantAggregate = z.infer<typeof variantAggregateSchema>;

export const aggregatesSchema = z.strictObject({
  variants: z.array(variantAggregateSchema),
  cells: z.array(cellAggregateSchema),
});
export type Aggregates = z.infer<typeof aggregatesSchema>;

// ── comparisons and verdict ────────────────────────────────────────────────────────────────

const verdictStatusSchema = z.enum(["accept", "reject", "need_more_work", "infrastructure_error"]);
export type VerdictStatus = z.infer<typeof verdictStatusSchema>;

/**
 * `score-with-exact-test`: the stratified Miettinen–Nurminen score interval, kept at 0 where the
 * exact conditional test does not exclude 0 (the fixed design); `sequential-sign`: the
 * sequential design's repeated interval. `newcombe-hybrid-score` and `stratified-newcombe-mover`
 * appear only in verdicts written before the exact test decided (their comparisons have no
 * `test`), which decided with them.
 */
const intervalMethodSchema = z.enum([
  "score-with-exact-test",
  "sequential-sign",
  "newcombe-hybrid-score",
  "stratified-newcombe-mover",
]);

/** A two-sided confidence interval for a pass-rate difference (candidate − baseline). */
const differenceIntervalSchema = z.strictObject({
  lower: z.number().min(-1).max(1),
  upper: z.number().min(-1).max(1),
  /** Confidence level, 1 − alpha (1 for a sequential look whose boundary cannot be crossed yet). */
  level: z.number().gt(0).max(1),
  method: intervalMethodSchema,
});
export type DifferenceInterval = z.infer<typeof differenceIntervalSchema>;

const exactTestMethodSchema = z.enum(["fisher-exact", "stratified-exact-conditional"]);
export type ExactTestMethod = z.infer<typeof exactTestMethodSchema>;

const probability = z.number().min(0).max(1);

/** One-sided p-values: `upper` for "the candidate is better", `lower` for "worse". */
const testTailsSchema = z.strictObject({ upper: probability, lower: probability });

/** Where the sequential design's walk stood at its deciding (or last) look. */
const sequentialSummarySchema = z.strictObject({
  spending: z.literal("obrien-fleming"),
  /** Tasks × planned trials per cell: the looks the design allows for. */
  plannedPairs: count,
  /** Pairs (trial i of both variants on a task) looked at, in planned order. */
  pairs: count,
  /** Pairs with both trials completed (not infrastructure errors). */
  usablePairs: count,
  /** Pairs the candidate won (it passed, the baseline failed) and lost. */
  wins: count,
  losses: count,
  /** The pair whose look crossed a boundary; null when none did. */
  decidedAtPair: count.nullable(),
  /** Trials of the planned order (all variants) up to the one that completed the deciding pair. */
  decidedAfterTrials: count.nullable(),
  /**
   * The same sequential test with infrastructure errors counted as failures, run alongside at
   * every look: an accept needs both to cross upward (absent in verdicts written before it).
   */
  infraAsFailure: z
    .strictObject({
      wins: count,
      losses: count,
      decided: z.enum(["up", "down"]).nullable(),
      decidedAtPair: count.nullable(),
    })
    .optional(),
});
export type SequentialSummary = z.infer<typeof sequentialSummarySchema>;

/**
 * The test that decided a comparison: its two-sided p-value and the level it is compared
 * with. In the direction of the difference, p ≤ threshold exactly when the interval excludes 0.
 */
const decisionTestSchema = z.strictObject({
  design: z.enum(["fixed", "sequential"]),
  /**
   * `exact-conditional-and-score`: a side is shown when both the exact conditional test and
   * the score test reject at threshold/2; `sequential-sign`: the sequential design's boundary.
   */
  method: z.enum(["exact-conditional-and-score", "sequential-sign"]),
  pValue: probability,
  /** alpha/k (fixed design); the deciding look's two-sided nominal level (sequential). */
  threshold: probability,
  /** Fixed design: each part's one-sided p-values (the decision takes the larger per side). */
  exact: testTailsSchema.nullable(),
  score: testTailsSchema.nullable(),
  sequential: sequentialSummarySchema.nullable(),
});
export type DecisionTest = z.infer<typeof decisionTestSchema>;

/** About how many trials would settle a need_more_work comparison, if the observed rates held. */
const settleEstimateSchema = z.strictObject({
  /** Completed trials per variant per task at which the decision would be likely (80%) reached. */
  trialsPerCell: count,
  /** Trials still to run for it, over the compared variants and tasks. */
  moreTrials: count,
  /** Their expected USD cost at the mean cost per trial so far; null when no cost was reported. */
  moreCostUsd: amount.nullable(),
});
export type SettleEstimate = z.infer<typeof settleEstimateSchema>;

/** A task on which the majority outcome changed between the baseline and the candidate. */
const flippedTaskSchema = z.strictObject({
  task: z.string(),
  /** `improved`: baseline failed the majority, candidate passed the majority; `regressed`: the reverse. */
  direction: z.enum(["improved", "regressed"]),
  variantPassRate: z.number().min(0).max(1),
  baselinePassRate: z.number().min(0).max(1),
});
export type FlippedTask = z.infer<typeof flippedTaskSchema>;

const costCheckSchema = z.strictObject({
  /** `usd-estimated`: USD with list-price estimates for trials whose host reported none. */
  currency: z.enum(["usd", "usd-estimated", "credits"]),
  status: z.enum(["passed", "failed", "skipped"]),
  /** Candidate ÷ baseline mean cost per completed trial; null when not computable. */
  ratio: amount.nullable(),
  maxRatio: z.number().positive(),
  detail: z.string(),
});
export type CostCheck = z.infer<typeof costCheckSchema>;

const pairOf = <T extends z.ZodType>(schema: T) =>
  z.strictObject({ variant: schema, baseline: schema });

export const comparisonSchema = z.strictObject({
  variant: z.string(),
  baseline: z.string(),
  status: verdictStatusSchema,
  reason: z.string(),
  /** Tasks on which both variants have completed trials; the comparison uses only these. */
  tasks: z.array(z.string()),
  /** Mean over the compared tasks of each task's pass rate. */
  passRate: pairOf(rateSummarySchema),
  /** Pass-rate difference, infrastructure errors excluded (what the decision uses). */
  difference: z.number().min(-1).max(1).nullable(),
  interval: differenceIntervalSchema.nullable(),
  /** The same difference and interval with infrastructure errors counted as failures. */
  infraAsFailure: z.strictObject({
    difference: z.number().min(-1).max(1).nullable(),
    interval: differenceIntervalSchema.nullable(),
  }),
  /**
   * Two-sided exact conditional p-value for "no difference", infrastructure errors excluded
   * (twice the smaller one-sided tail; in verdicts without `test`: the tables no more likely than the
   * observed one). For reading: `test` is what decided.
   */
  exactPValue: z.number().min(0).max(1).nullable(),
  exactTestMethod: exactTestMethodSchema.nullable(),
  /** The deciding test; null without compared tasks (absent in verdicts written before it existed). */
  test: decisionTestSchema.nullable().optional(),
  /** need_more_work: about how many more trials would settle it; null otherwise (absent before it existed). */
  toSettle: settleEstimateSchema.nullable().optional(),
  meanScore: pairOf(z.number().min(0).max(100).nullable()),
  /** Mean cost per completed trial (mean over the compared tasks). */
  meanCostUsd: pairOf(amount.nullable()),
  /** The same in USD with list-price estimates (absent in verdicts written before it). */
  meanUsdWithEstimates: pairOf(amount.nullable()).optional(),
  meanCredits: pairOf(amount.nullable()),
  costRatio: z.strictObject({
    usd: amount.nullable(),
    credits: amount.nullable(),
    /** Candidate ÷ baseline mean USD with estimates; absent in verdicts written before it. */
    usdWithEstimates: amount.nullable().optional(),
  }),
  costChecks: z.array(costCheckSchema),
  /** Pass rate (infrastructure errors excluded) per USD / per credit spent on a completed trial. */
  passRatePerUsd: pairOf(amount.nullable()),
  passRatePerCredit: pairOf(amount.nullable()),
  flippedTasks: z.array(flippedTaskSchema),
  /** paired-v1: both variants have at least minTrials completed trials on every task; null for heuristic-v1. */
  enoughTrials: z.boolean().nullable(),
});
export type Comparison = z.infer<typeof comparisonSchema>;

export const verdictSchema = z.strictObject({
  status: verdictStatusSchema,
  reason: z.string(),
  policy: verdictPolicySchema,
  baseline: z.string(),
  /** The accepted candidate with the largest pass-rate difference; null unless status is accept. */
  best: z.string().nullable(),
  comparisons: z.array(comparisonSchema),
});
export type Verdict = z.infer<typeof verdictSchema>;

/** What `verdict.json` embeds: the verdict with the aggregates it was decided from. */
export const verdictStatisticsSchema = verdictSchema.extend({ aggregates: aggregatesSchema });
export type VerdictStatistics = z.infer<typeof verdictStatisticsSchema>;

/** One planned trial. */
export interface TrialRef {
  variant: string;
  task: string;
  /** 1-based index within its variant × task cell. */
  trial: number;
}

export interface VerdictOptions {
  baseline: string;
  policy: VerdictPolicy;
  /** Planned variants; a planned variant without records counts as having no completed trial. */
  variants?: readonly string[];
  /** Planned tasks; a planned task without records for a variant counts as no completed trial. */
  tasks?: readonly string[];
  /** Trials planned per variant per task (the manifest's trial count); the sequential design needs it. */
  plannedTrials?: number;
  /**
   * The planned execution order of every trial; the sequential design needs it, since it looks
   * at the pairs of trials in this order, fixed before any outcome is known.
   */
  order?: readonly TrialRef[];
}

export interface StoppingOptions extends VerdictOptions {
  plannedTrials: number;
}

const stoppingDecisionSchema = z.strictObject({
  /** True when no outcome of the remaining planned trials can change the overall status. */
  canStop: z.boolean(),
  /** The settled status when canStop is true, else null. */
  status: verdictStatusSchema.nullable(),
  /** Status if every remaining candidate trial fails and every remaining baseline trial passes. */
  worstCase: verdictStatusSchema,
  /** Status if every remaining candidate trial passes and every remaining baseline trial fails. */
  bestCase: verdictStatusSchema,
  remainingTrials: count,
  reason: z.string(),
});
export type StoppingDecision = z.infer<typeof stoppingDecisionSchema>;

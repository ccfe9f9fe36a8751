// The statistics stage's public surface: pure functions from trial records to aggregates,
// intervals, tests and verdicts.
export { aggregate } from "./aggregate.js";
export {
  type Aggregates,
  type AmountSummary,
  aggregatesSchema,
  type CellAggregate,
  type Comparison,
  type CostCheck,
  comparisonSchema,
  DEFAULT_PAIRED_POLICY,
  type DifferenceInterval,
  type DurationSummary,
  type ExactTestMethod,
  type FlippedTask,
  type HeuristicPolicy,
  type IntervalMethod,
  type Outcome,
  type PairedPolicy,
  type PassAtKCurves,
  type PassAtKPoint,
  type RateInterval,
  type RateSummary,
  type StoppingDecision,
  type StoppingOptions,
  stoppingDecisionSchema,
  type TokenSummary,
  type TokenUsage,
  type TrialRecord,
  trialRecordSchema,
  type VariantAggregate,
  type Verdict,
  type VerdictOptions,
  type VerdictPolicy,
  type VerdictStatistics,
  type VerdictStatus,
  verdictPolicySchema,
  verdictSchema,
  verdictStatisticsSchema,
} from "./contract.js";
export { fisherExactTest, stratifiedExactTest } from "./exact.js";
export { HEURISTIC_MAX_COST_RATIO, HEURISTIC_SCORE_MARGIN } from "./heuristic.js";
export {
  type IntervalEstimate,
  newcombeDifference,
  stratifiedDifference,
  type TwoByTwo,
  wilsonInterval,
} from "./intervals.js";
export { normalQuantile } from "./normal.js";
export { passAtK, passAtKCurve, passHatK } from "./pass-at-k.js";
export { canStopEarly } from "./stopping.js";
export { computeVerdictStatistics, decideVerdict } from "./verdict.js";

// The statistics stage's public surface: pure functions from trial records to aggregates,
// intervals, tests and verdicts.
export { aggregate } from "./aggregate.js";
export {
  binomialLowerTail,
  binomialUpperTail,
  clopperPearsonLower,
  clopperPearsonUpper,
} from "./binomial.js";
export { type CalibrationResult, calibrateNoise } from "./calibration.js";
export {
  type Aggregates,
  type AmountSummary,
  aggregatesSchema,
  type CellAggregate,
  type Comparison,
  type CostCheck,
  comparisonSchema,
  DEFAULT_PAIRED_POLICY,
  type DecisionTest,
  type DifferenceInterval,
  type DurationSummary,
  decisionTestSchema,
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
  type SequentialSummary,
  type SettleEstimate,
  type StoppingDecision,
  type StoppingOptions,
  stoppingDecisionSchema,
  type TokenSummary,
  type TokenUsage,
  type TrialRecord,
  type TrialRef,
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
export {
  fisherExactTest,
  stratifiedExactTails,
  stratifiedExactTest,
  type Tails,
} from "./exact.js";
export { type FixedTest, fixedTest } from "./fixed-test.js";
export { formatBound, formatP, plural } from "./format.js";
export { HEURISTIC_MAX_COST_RATIO, HEURISTIC_SCORE_MARGIN } from "./heuristic.js";
export {
  type IntervalEstimate,
  newcombeDifference,
  stratifiedDifference,
  type TwoByTwo,
  wilsonInterval,
} from "./intervals.js";
export { assumedTrial } from "./layout.js";
export { normalQuantile } from "./normal.js";
export { passAtK, passAtKCurve, passHatK } from "./pass-at-k.js";
export {
  detectableEffect,
  estimatePower,
  type PowerEstimate,
  type PowerScenario,
  simulateComparison,
  trialsForPower,
  trialsToSettle,
} from "./planning.js";
export { restrictedRates, scoreInterval, scoreStatistic, scoreTails } from "./score.js";
export {
  obrienFlemingSpending,
  pairsInPlannedOrder,
  type SequentialLook,
  type SequentialResult,
  sequentialSignTest,
  type TrialPair,
} from "./sequential.js";
export { canStopEarly } from "./stopping.js";
export { computeVerdictStatistics, decideVerdict } from "./verdict.js";

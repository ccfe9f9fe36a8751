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
  aggregatesSchema,
  type CellAggregate,
  type Comparison,
  comparisonSchema,
  DEFAULT_PAIRED_POLICY,
  type DecisionTest,
  type DifferenceInterval,
  type FlippedTask,
  type HeuristicPolicy,
  type Outcome,
  type PairedPolicy,
  type PassAtKPoint,
  type RateInterval,
  type SequentialSummary,
  type StoppingDecision,
  type StoppingOptions,
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
} from "./exact.js";
export { fixedTest } from "./fixed-test.js";
export { formatP, plural } from "./format.js";

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
export { scoreInterval, scoreStatistic } from "./score.js";
export {
  obrienFlemingSpending,
  type SequentialResult,
  sequentialSignTest,
  type TrialPair,
} from "./sequential.js";
export { canStopEarly, watchSequentialDesign } from "./stopping.js";
export { computeVerdictStatistics, decideVerdict } from "./verdict.js";

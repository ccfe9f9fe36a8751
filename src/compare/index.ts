// The compare stage's public surface: experiment model, manifest loading and planning.

export * from "../artifacts/index.js";
export * from "./ci/index.js";
export { ExperimentInputError } from "./errors.js";
export {
  defaultStateDir,
  loadRunKey,
  type RunKey,
  STATE_DIR_VARIABLE,
  verifyRecord,
} from "./evidence/record-seal.js";
export {
  buildVerdictDocument,
  flipEvidence,
  loadTrialDetails,
  renderVerdictHtml,
  writeVerdictFiles,
} from "./evidence/verdict.js";
export * from "./experiment.js";
export * from "./manifest/index.js";
export {
  parseQueueUrl,
  probeQueue,
  type QueueAddress,
  type QueueTrialsOptions,
  queueTrials,
  runWorker,
  type WorkerOptions,
} from "./queue/index.js";
export {
  applyContractOverrides,
  type GraderContractArg,
  parseGraderContractArg,
  resolveGraderContracts,
} from "./regrade/contracts.js";
export {
  type RegradeContract,
  type RegradeOptions,
  type RegradeResult,
  regradeRun,
} from "./regrade/regrade.js";
export {
  changeDirection,
  formatRegradeReport,
  type RegradeSummary,
  type RegradeTrial,
  summarizeRegrade,
} from "./regrade/summary.js";
export { assembleExperiment } from "./run/assemble.js";
export {
  type BudgetLimits,
  budgetReached,
} from "./run/budget.js";
export { calibrationExperiment } from "./run/calibrate.js";
export { planTrials, trialArtifactDir } from "./run/plan.js";
export {
  type ExperimentPlan,
  formatPlan,
  type PlanRequest,
  pastCostPerTrial,
  planExperiment,
} from "./run/planning.js";
export {
  type PreflightFailure,
  type PreflightOptions,
  type Prepared,
  preflight,
} from "./run/preflight.js";
export { mulberry32, shuffleInPlace } from "./run/prng.js";
export { createRunLock, RUN_LOCK_FILE } from "./run/run-lock.js";
export {
  type RunExperimentOptions,
  type RunExperimentResult,
  type RunProgress,
  runExperiment,
  type TrialPlaceFactory,
} from "./run/runner.js";
export {
  CACHE_KEY_VARIABLE,
  loadTrialCacheKey,
  type TrialCache,
  TrialCacheKeyError,
} from "./run/trial-cache.js";

// The compare stage's public surface: experiment model, manifest loading and planning.

export * from "../artifacts/index.js";
export { ExperimentInputError } from "./errors.js";
export {
  createRunKey,
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
  queueTrials,
  runWorker,
  type WorkerOptions,
} from "./queue/index.js";
export {
  applyContractOverrides,
  type ContractOverride,
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
  type ChangeDirection,
  changeDirection,
  formatRegradeReport,
  type PassRateChange,
  type RegradeSummary,
  type RegradeTrial,
  summarizeRegrade,
  type TrialChange,
} from "./regrade/summary.js";
export { type AssembledVariant, assembleExperiment, compileHarnessFiles } from "./run/assemble.js";
export {
  type BudgetLimits,
  budgetReached,
  describeBudgetStop,
} from "./run/budget.js";
export { calibrationExperiment } from "./run/calibrate.js";
export { plannedOrder, planTrials, trialArtifactDir, trialDirName } from "./run/plan.js";
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
export { createRunLock, RUN_LOCK_FILE, type RunLock } from "./run/run-lock.js";
export {
  type RunExperimentOptions,
  type RunExperimentResult,
  type RunProgress,
  runExperiment,
} from "./run/runner.js";
export {
  classifyTrial,
  combineGrades,
  type TrialClassification,
  type TrialEvidence,
} from "./trial/classify.js";

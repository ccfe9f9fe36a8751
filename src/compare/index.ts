// The compare stage's public surface: experiment model, manifest loading and planning.

export * from "../artifacts/index.js";
export { type AssembledVariant, assembleExperiment, compileHarnessFiles } from "./assemble.js";
export {
  type BudgetLimits,
  budgetReached,
  describeBudgetStop,
} from "./budget.js";
export { calibrationExperiment } from "./calibrate.js";
export {
  classifyTrial,
  combineGrades,
  type TrialClassification,
  type TrialEvidence,
} from "./classify.js";
export { ExperimentInputError } from "./errors.js";
export * from "./experiment.js";
export * from "./manifest/index.js";
export { plannedOrder, planTrials, trialArtifactDir, trialDirName } from "./plan.js";
export {
  type ExperimentPlan,
  formatPlan,
  type PlanRequest,
  pastCostPerTrial,
  planExperiment,
} from "./planning.js";
export {
  type PreflightFailure,
  type PreflightOptions,
  type Prepared,
  preflight,
} from "./preflight.js";
export { mulberry32, shuffleInPlace } from "./prng.js";
export {
  createRunKey,
  defaultStateDir,
  loadRunKey,
  type RunKey,
  STATE_DIR_VARIABLE,
  verifyRecord,
} from "./record-seal.js";
export {
  type RegradeContract,
  type RegradeOptions,
  type RegradeResult,
  regradeRun,
} from "./regrade.js";
export {
  applyContractOverrides,
  type ContractOverride,
  type GraderContractArg,
  parseGraderContractArg,
  resolveGraderContracts,
} from "./regrade-contracts.js";
export {
  type ChangeDirection,
  changeDirection,
  formatRegradeReport,
  type PassRateChange,
  type RegradeSummary,
  type RegradeTrial,
  summarizeRegrade,
  type TrialChange,
} from "./regrade-summary.js";
export { createRunLock, RUN_LOCK_FILE, type RunLock } from "./run-lock.js";
export {
  type RunExperimentOptions,
  type RunExperimentResult,
  type RunProgress,
  runExperiment,
} from "./runner.js";
export {
  buildVerdictDocument,
  flipEvidence,
  loadTrialDetails,
  renderVerdictHtml,
  writeVerdictFiles,
} from "./verdict.js";

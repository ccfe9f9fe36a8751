export { type CommandGraderOptions, createCommandGrader } from "./command.js";
export {
  createForgeStateGrader,
  createReadFactsGrader,
  FORGE_STATE_GRADER_ID,
  type ForgeStateGraderOptions,
  orderDifferences,
  READ_FACTS_GRADER_ID,
  type ReadFactsGraderOptions,
  summarizeDifferences,
} from "./forge.js";
export type { CommandEvidence } from "./output.js";
export {
  CODE_GENERATION_GLOBALS,
  containsToken,
  createReadmePackageGrader,
  HOST_CAPABILITY_GLOBALS,
  loadReadmeContract,
  MAX_README_BYTES,
  permissionFlag,
  QUICK_START_HEADING,
  README_PACKAGE_GRADER_ID,
  README_PACKAGE_WEIGHTS,
  type ReadmeCheckId,
  type ReadmePackageContract,
  type ReadmePackageGraderOptions,
  readmePackageContractSchema,
  type ScreenFinding,
  type ScreenResult,
  type ScreenRule,
  sandboxNodeFlags,
  screenExample,
  validateReadmeContract,
} from "./readme/index.js";
export { gradeCheckSchema, gradeSchema } from "./schemas.js";
export {
  createScopeGrader,
  evaluateScope,
  type ScopeEvidence,
  type ScopeGraderOptions,
  type ScopeMode,
} from "./scope.js";
export {
  type Grade,
  type GradeCheck,
  type GradeContext,
  type Grader,
  weightedScore,
} from "./types.js";

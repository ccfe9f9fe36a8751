export { type CommandGraderOptions, createCommandGrader } from "./command.js";
export {
  createForgeStateGrader,
  createReadFactsGrader,
  FORGE_STATE_GRADER_ID,
  type ForgeStateGraderOptions,
  READ_FACTS_GRADER_ID,
  type ReadFactsGraderOptions,
} from "./forge.js";

export {
  containsToken,
  createReadmePackageGrader,
  loadReadmeContract,
  permissionFlag,
  README_PACKAGE_GRADER_ID,
  README_PACKAGE_WEIGHTS,
  type ReadmePackageContract,
  type ReadmePackageGraderOptions,
  readmePackageContractSchema,
  sandboxNodeFlags,
  screenExample,
  validateReadmeContract,
} from "./readme/index.js";
export { gradeCheckSchema, gradeSchema } from "./schemas.js";
export {
  createScopeGrader,
  type ScopeGraderOptions,
  type ScopeMode,
} from "./scope.js";
export {
  createTestsGrader,
  judgeTests,
  type ReportedTest,
  readJunitReport,
  TEST_REPORT_VARIABLE,
  type TestExpectations,
  type TestRunner,
  type TestStatus,
  type TestsGraderOptions,
  VITEST_ENTRY,
} from "./tests/index.js";
export {
  type Grade,
  type GradeCheck,
  type GradeContext,
  type Grader,
  weightedScore,
} from "./types.js";

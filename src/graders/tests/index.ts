export {
  createTestsGrader,
  TEST_REPORT_VARIABLE,
  type TestRunner,
  type TestsGraderOptions,
  VITEST_ENTRY,
} from "./grader.js";
export {
  judgeTests,
  type ReportedTest,
  readJunitReport,
  type TestExpectations,
  type TestStatus,
} from "./report.js";

// The package entry (`import … from "harnesslab"`): each stage's stable surface. Stage
// sub-paths (`harnesslab/ir`, `/exec`, `/compare`, `/scoring`, `/stats`, `/graders`)
// expose everything a stage exports.

// Comparison: manifests, the runner, statistics, reports
export {
  checkOutDir,
  type Experiment,
  ExperimentInputError,
  type GraderSpec,
  type LoadManifestResult,
  loadHarnessCatalog,
  loadManifest,
  planTrials,
  type RunExperimentOptions,
  type RunExperimentResult,
  type RunProgress,
  regradeRun,
  runExperiment,
  type TaskSpec,
  type TrialJob,
  type TrialMetrics,
  type VariantSpec,
  type VerdictDocument,
  validateManifestForCli,
} from "./compare/index.js";
// Execution: executors, receipts, the tool policy, workspaces
export {
  type BashOutput,
  ClaudeCodeExecutor,
  type ClaudeCodeExecutorOptions,
  CodexExecutor,
  type CodexExecutorOptions,
  createExecutor,
  type Executor,
  type ExecutorRunInput,
  type GrepMatch,
  type InfraReason,
  PiExecutor,
  type PiExecutorOptions,
  QoderExecutor,
  type QoderExecutorOptions,
  type ReceiptStatus,
  type RuntimeReceipt,
  type RuntimeSettings,
  redact,
  runtimeReceiptSchema,
  type ScriptedAgent,
  type ScriptedAgentContext,
  ScriptedExecutor,
  type ScriptedTools,
  startAnthropicLoopback,
  startResponsesLoopback,
  type ToolDenied,
  type ToolFailed,
  type ToolResult,
} from "./exec/index.js";
// Evaluation: graders, the forge scoring seam
export {
  createCommandGrader,
  createReadmePackageGrader,
  createScopeGrader,
  type Grade,
  type GradeCheck,
  type GradeContext,
  type Grader,
  loadReadmeContract,
  type ReadmePackageContract,
  weightedScore,
} from "./graders/index.js";
export {
  buildRunPreamble,
  HOST_IDS,
  type HostId,
  type HostProfile,
  hostProfile,
  isHostId,
} from "./hosts/index.js";
export * from "./ir/index.js";
// Assembly: language → IR → resolver → hosts
export {
  type CompileResult,
  compileHarness,
  DIAGNOSTIC_CODES,
  type Diagnostic,
  type DiagnosticCode,
  formatDiagnostic,
  type SourceInput,
} from "./language/index.js";
export {
  createToolPolicy,
  type PolicyDecision,
  type PolicyDecisionRecord,
  type ToolPolicy,
} from "./policy/index.js";
export { renderHtmlReport, renderMarkdownReport, renderTerminalSummary } from "./report/index.js";
export { type ResolveOptions, type ResolveResult, resolveComposition } from "./resolver/index.js";
export * from "./scoring/index.js";
export { type InputProblem, InvalidInputError } from "./shared/index.js";
export {
  type Aggregates,
  aggregate,
  canStopEarly,
  computeVerdictStatistics,
  decideVerdict,
  newcombeDifference,
  passAtK,
  passHatK,
  type TrialRecord,
  type Verdict,
  type VerdictPolicy,
  wilsonInterval,
} from "./stats/index.js";
export {
  applyPatch,
  type CapturePatchOptions,
  capturePatch,
  createTrialWorkspace,
  type GitBaseline,
  snapshotTree,
  WorkspaceError,
} from "./workspace/index.js";

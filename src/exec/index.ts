export {
  type ClaudeAgentSdk,
  ClaudeCodeExecutor,
  type ClaudeCodeExecutorOptions,
} from "./claude-code/index.js";
export {
  CodexExecutor,
  type CodexExecutorOptions,
  type CodexSdkModule,
} from "./codex/index.js";
export { createExecutor, executorsByHost } from "./factory.js";
export * from "./loopback/index.js";
export {
  PiExecutor,
  type PiExecutorOptions,
  type PiSdk,
} from "./pi/index.js";
export * from "./qoder/index.js";
export { type HostProblem, hostReadiness } from "./readiness.js";
export {
  INFRA_REASONS,
  type InfraReason,
  type PermissionDecisions,
  permissionDecisionsDocument,
  permissionDecisionsSchema,
  RECEIPT_STATUSES,
  type ReceiptStatus,
  RUNTIME_RECEIPT_VERSION,
  type RuntimeReceipt,
  runtimeReceiptSchema,
  type TokenUsage,
  type TraceEvent,
  tokenUsageSchema,
  traceEventSchema,
} from "./receipt.js";
export {
  isSecretKey,
  type RedactOptions,
  redact,
  redactText,
  secretValuesFromEnv,
} from "./redact.js";
export { checkAgentModule } from "./scripted/agents.js";
export type {
  BashOutput,
  GrepMatch,
  ScriptedAgent,
  ScriptedAgentContext,
  ScriptedForge,
  ScriptedSetup,
  ScriptedSetupComponent,
  ScriptedTools,
  ToolDenied,
  ToolFailed,
  ToolResult,
} from "./scripted/contract.js";
export { ScriptedExecutor, type ScriptedExecutorOptions } from "./scripted/executor.js";
export { promptWithPreamble } from "./sdk/common.js";
export {
  type HostSetupReport,
  hostSetupReportSchema,
  type SetupComponent,
} from "./setup/contract.js";
export {
  type Executor,
  type ExecutorForgeAccess,
  type ExecutorRunInput,
  HOST_IDS,
  type HostId,
  type RuntimeSettings,
} from "./types.js";

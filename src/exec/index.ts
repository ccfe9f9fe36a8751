export {
  CLAUDE_AGENT_SDK_PACKAGE,
  CLAUDE_HOST_VARIABLES,
  type ClaudeAgentSdk,
  ClaudeCodeExecutor,
  type ClaudeCodeExecutorOptions,
} from "./claude-code/index.js";
export {
  CODEX_ENV_VARIABLES,
  CODEX_SDK_PACKAGE,
  type CodexEndpoint,
  CodexExecutor,
  type CodexExecutorOptions,
  type CodexSdkModule,
} from "./codex/index.js";
export { createExecutor } from "./factory.js";
export * from "./loopback/index.js";
export {
  PI_DEFAULT_MODEL,
  PI_HOST_VARIABLES,
  PI_PACKAGE,
  PI_SYSTEM_PROMPT,
  type PiAuthStorage,
  PiExecutor,
  type PiExecutorOptions,
  type PiModel,
  type PiSdk,
  type PiSession,
} from "./pi/index.js";
export * from "./qoder/index.js";
export { type HostProblem, hostReadiness } from "./readiness.js";
export {
  INFRA_REASONS,
  type InfraReason,
  PERMISSION_DECISIONS_VERSION,
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
export { importAgentModule } from "./scripted/agents.js";
export type {
  BashOutput,
  GrepMatch,
  ScriptedAgent,
  ScriptedAgentContext,
  ScriptedForge,
  ScriptedTools,
  ToolDenied,
  ToolFailed,
  ToolResult,
} from "./scripted/contract.js";
export { ScriptedExecutor, type ScriptedExecutorOptions } from "./scripted/executor.js";
export { promptWithPreamble } from "./sdk/common.js";
export {
  type Executor,
  type ExecutorForgeAccess,
  type ExecutorRunInput,
  HOST_IDS,
  type HostId,
  type RuntimeSettings,
} from "./types.js";

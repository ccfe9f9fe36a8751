export {
  type CommandCheck,
  checkCommand,
  isPlainArgv,
  type TokenizeResult,
  tokenizeCommand,
  tokenizeQuotedCommand,
} from "./command.js";
export { createToolPolicy } from "./policy.js";
export { maskCredentials } from "./summary.js";
export { normalizeToolName } from "./tools.js";
export {
  CANONICAL_TOOLS,
  type CanonicalTool,
  type PathResolverFs,
  POLICY_RULES,
  type PolicyDecision,
  type PolicyDecisionRecord,
  type PolicyRule,
  policyDecisionRecordSchema,
  TOOL_USE_KINDS,
  type ToolPolicy,
  type ToolPolicyOptions,
  type ToolUse,
  type ToolUseKind,
  toolUseSchema,
} from "./types.js";

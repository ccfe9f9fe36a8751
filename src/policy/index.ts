export {
  checkCommand,
  isPlainArgv,
  tokenizeCommand,
  tokenizeQuotedCommand,
} from "./command.js";
export { createToolPolicy } from "./policy.js";
export { maskCredentials } from "./summary.js";

export {
  type PolicyDecision,
  type PolicyDecisionRecord,
  type PolicyRule,
  policyDecisionRecordSchema,
  SETUP_SKILL_NAMESPACE,
  TOOL_USE_KINDS,
  type ToolPolicy,
  type ToolUse,
  toolUseSchema,
} from "./types.js";

export { CLAUDE_AGENT_SDK_PACKAGE, CLAUDE_HOST_VARIABLES } from "./env.js";
export {
  type ClaudeAgentSdk,
  ClaudeCodeExecutor,
  type ClaudeCodeExecutorOptions,
} from "./executor.js";

export {
  type ClaudeAgentSdk,
  ClaudeCodeExecutor,
  type ClaudeCodeExecutorOptions,
} from "./executor.js";

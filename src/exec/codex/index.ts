// The codex host's public surface.
export {
  CodexExecutor,
  type CodexExecutorOptions,
} from "./executor.js";
export type { CodexSdkModule } from "./sdk-types.js";

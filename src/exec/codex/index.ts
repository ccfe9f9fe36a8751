// The codex host's public surface.
export {
  CODEX_ENV_VARIABLES,
  CODEX_SDK_PACKAGE,
  type CodexEndpoint,
  CodexExecutor,
  type CodexExecutorOptions,
} from "./executor.js";
export type {
  CodexClientOptions,
  CodexSdkModule,
  CodexThreadEvent,
  CodexThreadItem,
  CodexThreadOptions,
} from "./sdk-types.js";

// The qoder host's public surface.
export { type QoderAuthKind, type ResolvedQoderAuth, resolveQoderAuth } from "./auth.js";
export {
  DEFAULT_PERSONAL_ACCESS_TOKEN_ENV,
  DEFAULT_SERVICE_ACCOUNT_ENV,
  QODER_CLI_ENTRY,
  QODER_CLI_PACKAGE,
  QODER_PROFILES,
  QODER_SDK_PACKAGE,
  type QoderAuth,
  type QoderExecutorOptions,
  type QoderProfile,
  type QoderSdk,
  type QoderSdkAuthObject,
} from "./contract.js";
export { QODER_NOT_CONTAINABLE, QoderExecutor } from "./executor.js";
export { MINIMAL_SYSTEM_PROMPT, MINIMAL_TOOLS } from "./options.js";

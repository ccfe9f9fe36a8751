// The qoder host's public surface.
export { resolveQoderAuth } from "./auth.js";
export type {
  QoderExecutorOptions,
  QoderSdk,
} from "./contract.js";
export { QODER_NOT_CONTAINABLE, QoderExecutor } from "./executor.js";
export { MINIMAL_SYSTEM_PROMPT } from "./options.js";

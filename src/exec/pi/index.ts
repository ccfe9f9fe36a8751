export type { PiAuthStorage, PiModel, PiSdk, PiSession } from "./contract.js";
export {
  PI_HOST_VARIABLES,
  PI_PACKAGE,
  PI_SYSTEM_PROMPT,
  PiExecutor,
  type PiExecutorOptions,
} from "./executor.js";
export { PI_DEFAULT_MODEL } from "./model.js";

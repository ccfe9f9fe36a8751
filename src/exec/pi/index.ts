export type { PiAuthStorage, PiSdk, PiSession } from "./contract.js";
export {
  PI_SYSTEM_PROMPT,
  PiExecutor,
  type PiExecutorOptions,
} from "./executor.js";

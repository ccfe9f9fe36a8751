import { ScriptedExecutor } from "./scripted/executor.js";
import type { Executor, HostId } from "./types.js";

/** The executor for a host. Real hosts load their SDK lazily, so a missing SDK only matters when used. */
export function createExecutor(host: HostId): Executor {
  switch (host) {
    case "scripted":
      return new ScriptedExecutor();
    default:
      throw new Error(`no executor for host ${host} in this version of harnesslab`);
  }
}

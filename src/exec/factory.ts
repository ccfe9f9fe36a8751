import { ClaudeCodeExecutor } from "./claude-code/index.js";
import { CodexExecutor } from "./codex/index.js";
import { PiExecutor } from "./pi/index.js";
import { QoderExecutor } from "./qoder/index.js";
import { ScriptedExecutor } from "./scripted/executor.js";
import type { Executor, HostId } from "./types.js";

/** The executor for a host. Real hosts load their SDK lazily, so a missing SDK only matters when used. */
export function createExecutor(host: HostId): Executor {
  switch (host) {
    case "scripted":
      return new ScriptedExecutor();
    case "claude-code":
      return new ClaudeCodeExecutor();
    case "pi":
      return new PiExecutor();
    case "codex":
      return new CodexExecutor();
    case "qoder":
      return new QoderExecutor();
    default:
      throw new Error(`no executor for host ${host} in this version of harnesslab`);
  }
}

/** One executor per host, made the first time a trial of that host asks for it. */
export function executorsByHost(
  create: (host: HostId) => Executor = createExecutor,
): (host: HostId) => Executor {
  const made = new Map<HostId, Executor>();
  return (host) => {
    let executor = made.get(host);
    if (executor === undefined) {
      executor = create(host);
      made.set(host, executor);
    }
    return executor;
  };
}

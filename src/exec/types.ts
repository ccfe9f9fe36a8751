import type { HostId } from "../hosts/index.js";
import type { ToolPolicy } from "../policy/index.js";
import type { CommandSandbox } from "../sandbox/index.js";
import type { RuntimeReceipt } from "./receipt.js";

/** Agent runtimes an executor can drive (SPEC §2): the one list in `src/hosts`. */
export { HOST_IDS, type HostId } from "../hosts/index.js";

/** Runtime settings a variant asks for; each executor maps them to its host's options. */
export interface RuntimeSettings {
  model?: string;
  /** Tools visible to the agent. */
  tools: readonly string[];
  /** Tools approved without asking the policy (the v1 manifest requires none). */
  allowedTools: readonly string[];
  disallowedTools: readonly string[];
  permissionMode?: string;
  maxTurns?: number;
  /** Named runtime profile of the host (e.g. `qoder-minimal-v1`); absent means the host's default. */
  profile?: string;
}

export interface ExecutorRunInput {
  /** The task prompt. */
  prompt: string;
  /** The composition's run preamble (advisory text for hosts that cannot wire components). */
  preamble: string;
  /** The trial root: the agent's working directory. */
  cwd: string;
  /** The bounded permission policy for this trial; every tool call is put to it. */
  policy: ToolPolicy;
  /** Wall-clock budget for the whole run; past it the agent is aborted and the status is `timeout`. */
  timeoutMs: number;
  /** Aborts the run from outside (status `aborted`). */
  signal?: AbortSignal;
  /** A private directory outside the trial root for the run's isolated home and config. */
  scratchDir: string;
  /**
   * Contains every process that may run the trial's code: the validation commands the agent
   * runs (and, for real hosts, the host's own process, which runs them itself).
   */
  sandbox: CommandSandbox;
  runtime: RuntimeSettings;
  /**
   * Scripted host only: a built-in agent (`nop`, `oracle:<absolute patch path>`) or the absolute
   * path of an ES module whose default export is the agent.
   */
  agent?: string;
  /** The trial's number within its variant and task, as the runner numbers trials. */
  trialIndex: number;
  variant: string;
  task: string;
}

/**
 * Runs one trial's agent on one host. `run` never throws for anything the agent or the host does:
 * every outcome, infrastructure failures included, is a receipt.
 */
export interface Executor {
  readonly host: HostId;
  run(input: ExecutorRunInput): Promise<RuntimeReceipt>;
}

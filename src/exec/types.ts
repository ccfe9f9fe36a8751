import type { HostId } from "../hosts/index.js";
import type { ToolPolicy } from "../policy/index.js";
import type { CommandSandbox, GrantedEndpoint } from "../sandbox/index.js";
import type { RuntimeReceipt } from "./receipt.js";
import type { SetupComponent } from "./setup/contract.js";

/** Agent runtimes an executor can drive: the one list in `src/hosts`. */
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
  /** Forge tasks: how the agent reaches the trial's repository. */
  forge?: ExecutorForgeAccess;
  /**
   * The components the executor hands to its host itself (skills, instructions, MCP servers,
   * hooks, subagents), their sources materialized read-only outside the trial. An executor
   * reports what the host made of each in the receipt's `setup`, and returns `setup_failed`
   * before the agent starts when one whose `onDegrade` is `fail` did not load.
   */
  setup?: readonly SetupComponent[];
}

/**
 * A forge task's repository as the executor hands it to the agent. The arm is the variant's
 * composition's: an `mcp` agent gets the forge MCP server and no forge endpoint for its commands;
 * a `cli` agent gets the forge's API for its commands and no MCP server; a `tool` agent reaches it
 * through a component of its own setup: an MCP server the harness starts with the forge granted
 * (nothing for the executor to add), or a program its commands run (as for `cli`).
 */
export interface ExecutorForgeAccess {
  access: "mcp" | "cli" | "tool";
  /** `tool`: the component of the variant's setup the agent reaches the forge with. */
  tool?: { component: string; kind: "mcp-server" | "cli" };
  owner: string;
  repo: string;
  /** The login the agent acts as. */
  user: string;
  /**
   * The forge as the harness itself reaches it (instance root and token): what a scripted agent,
   * which runs in the harness's process, gets as `ctx.forge`.
   */
  direct: { url: string; token: string };
  /**
   * What the agent's process reaches: the MCP server (`mcp`) or the forge's API gateway, which
   * adds the credential (`cli`, `tool`). `url` is as the process sees it (inside its sandbox when
   * `grant` is set, which must then be granted; a loopback URL otherwise).
   */
  endpoint: { url: string; grant?: GrantedEndpoint };
  /** `mcp`: the server's name in the host's configuration and the tool names the policy allows. */
  mcp?: {
    server: string;
    tools: string[];
    /** Answers MCP requests in-process (a scripted agent's client talks to it directly). */
    handle(request: Request): Promise<Response>;
  };
  /** The programs the policy lets run with any arguments (`cli`; a `cli` tool: its own name). */
  commands?: string[];
  /** A `cli` tool: the read-only folder holding its program, put first on its commands' PATH. */
  programDir?: string;
  /** Variables the agent's commands get (FORGE_URL, FORGE_REPO, …): no credential among them. */
  env: Record<string, string>;
}

/** Whether the agent's commands reach the forge (the `cli` arm, or a program as its tool). */
export function commandsReachForge(forge: ExecutorForgeAccess | undefined): boolean {
  return forge?.access === "cli" || forge?.tool?.kind === "cli";
}

/**
 * Runs one trial's agent on one host. `run` never throws for anything the agent or the host does:
 * every outcome, infrastructure failures included, is a receipt.
 */
export interface Executor {
  readonly host: HostId;
  run(input: ExecutorRunInput): Promise<RuntimeReceipt>;
}

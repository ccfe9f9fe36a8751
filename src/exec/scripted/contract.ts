import type { PolicyRule } from "../../policy/index.js";

/** A call the policy refused. Denials are values: a scripted agent sees them and carries on. */
export interface ToolDenied {
  ok: false;
  denied: true;
  reason: string;
  rule: PolicyRule;
}

/**
 * An allowed call that did not work (file missing, text not found, command could not start, the
 * trial ended while it ran). A call made after the trial ended does not resolve: it rejects.
 */
export interface ToolFailed {
  ok: false;
  denied: false;
  error: string;
}

export type ToolResult<T extends object> = ({ ok: true } & T) | ToolDenied | ToolFailed;

export interface GrepMatch {
  /** Relative to the trial root, `/`-separated. */
  path: string;
  /** 1-based. */
  line: number;
  text: string;
}

export interface BashOutput {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** Sandbox limits the command ran into (CPU, memory, file size, output), when any. */
  limitsHit?: { limit: string; detail: string }[];
}

/**
 * The scripted agent's tools. Each call goes through the trial's permission policy under the
 * Claude Code tool name (Read, Write, Edit, Glob, Grep, Bash), exactly as a real host's would.
 */
export interface ScriptedTools {
  read(path: string): Promise<ToolResult<{ content: string }>>;
  /** Creates missing parent directories inside the trial. */
  write(path: string, content: string): Promise<ToolResult<{ bytes: number }>>;
  /** Replaces the single occurrence of `oldText`; zero or several occurrences is a failure. */
  edit(path: string, oldText: string, newText: string): Promise<ToolResult<{ replacements: 1 }>>;
  /** Files matching `pattern` under the trial root (or `path`), relative to the root, sorted. */
  glob(pattern: string, path?: string): Promise<ToolResult<{ files: string[] }>>;
  /** Lines matching the JavaScript regular expression `pattern`, in text files under `path`. */
  grep(pattern: string, path?: string): Promise<ToolResult<{ matches: GrepMatch[] }>>;
  /** Runs a command from the trial's vocabulary (no shell) in the trial root. */
  bash(command: string): Promise<ToolResult<BashOutput>>;
  /**
   * Calls any tool by name with a raw, Claude Code–shaped input (`{file_path}`, `{command}`, …).
   * Unknown tools are put to the policy too, and denied. In a forge task whose variant reaches
   * the forge by MCP, the forge's tools are called this way (`mcp__forge__get_issue`, `{number}`):
   * allowed, they go to the trial's forge MCP server over MCP and resolve to
   * `{ok: true, result}` (the tool's JSON answer) or `{ok: false, denied: false, error}`.
   */
  call(toolName: string, input: unknown): Promise<ToolResult<Record<string, unknown>>>;
}

/** A forge task's repository, as a scripted agent gets it (`ctx.forge`). */
export interface ScriptedForge {
  /** The forge's instance root as the harness reaches it (the API is at url + /api/v1). */
  url: string;
  /** A token of `user` (live mode: the experimenter's own). */
  token: string;
  owner: string;
  repo: string;
  /** The login the agent acts as. */
  user: string;
  /** How the variant's composition says the agent reaches the forge. */
  access: "mcp" | "cli" | "tool";
  /**
   * `tool`: the component of the variant's setup that is the agent's way in: an MCP server (its
   * tools are `mcp__<component>__<tool>`) or a program its commands run by the component's name.
   */
  tool?: { component: string; kind: "mcp-server" | "cli" };
  /** `cli`: the forge as the agent's commands reach it (`tools.bash("curl " + commandUrl + …)`). */
  commandUrl?: string;
  /** `mcp`: the names of the forge MCP tools, as `tools.call` takes them. */
  mcpTools?: string[];
}

/**
 * One component of the variant's setup as the scripted host materialized it. Its files are a
 * read-only copy outside the trial (read them with node:fs; the agent's tools reach only the
 * trial). Only what the host loaded is listed: a component whose load failed is absent.
 */
export interface ScriptedSetupComponent {
  id: string;
  kind: string;
  /** `native-skill`, `system-instruction`, `mcp-server`, `native-hook` or `subagent`. */
  mechanism: string;
  description?: string;
  /** Absolute path of the materialized source (a folder, or a file). */
  path?: string;
  /** The source's files, relative to `path` (a file source: its own name). */
  files: string[];
  /** The main Markdown text: SKILL.md, the instructions file, the subagent's prompt. */
  text?: string;
  /** A skill's SKILL.md front matter. */
  skill?: { name: string; description: string };
  /** An MCP server's tools, named as `tools.call` takes them (`mcp__<component>__<tool>`). */
  mcp?: { tools: { name: string; description?: string }[] };
  hook?: { event: string; command: string[] };
  subagent?: { name: string; description?: string; prompt: string; tools: string[] };
}

/** `ctx.setup`: what the variant's setup put in the agent's hands. */
export interface ScriptedSetup {
  components: ScriptedSetupComponent[];
  /** What SessionStart and UserPromptSubmit hooks printed (as Claude Code adds it to the context). */
  context: string[];
}

export interface ScriptedAgentContext {
  prompt: string;
  preamble: string;
  /** The trial root. */
  cwd: string;
  tools: ScriptedTools;
  /**
   * Aborted when the run times out or is cancelled. From then on every tool call rejects, and an
   * agent that does not return soon after is ended (it runs in a thread the harness terminates).
   */
  signal: AbortSignal;
  trial: { index: number; variant: string; task: string };
  /** Forge tasks: the trial's repository on its forge. */
  forge?: ScriptedForge;
  /** The variant's setup: its skills, instructions, MCP servers, hooks and subagents. */
  setup: ScriptedSetup;
}

/**
 * A scripted agent: the default export of its module. The returned string is the agent's final
 * report; returning nothing means an empty report.
 */
export type ScriptedAgent = (
  context: ScriptedAgentContext,
) => Promise<string | undefined> | string | undefined;

// The exact options a trial hands to the Agent SDK's query(): nothing is left to Claude Code's
// defaults that could read the user's settings, sessions, MCP servers or environment.
import type { Options, PermissionMode } from "@anthropic-ai/claude-agent-sdk";
import type { ExecutorRunInput } from "../types.js";
import type { PermissionGate } from "./permissions.js";

export const CLAUDE_PERMISSION_MODES: readonly PermissionMode[] = [
  "default",
  "acceptEdits",
  "bypassPermissions",
  "plan",
  "dontAsk",
  "auto",
];

export function isClaudePermissionMode(mode: string): mode is PermissionMode {
  return (CLAUDE_PERMISSION_MODES as readonly string[]).includes(mode);
}

export interface QueryOptionsInput {
  input: ExecutorRunInput;
  env: Record<string, string>;
  abortController: AbortController;
  gate: PermissionGate;
  stderr: (data: string) => void;
  pathToClaudeCodeExecutable?: string;
  /** Starts Claude Code contained (see exec/sdk/contained.ts). */
  spawnClaudeCodeProcess?: Options["spawnClaudeCodeProcess"];
}

/** The query() options for one trial. */
export function buildQueryOptions({
  input,
  env,
  abortController,
  gate,
  stderr,
  pathToClaudeCodeExecutable,
  spawnClaudeCodeProcess,
}: QueryOptionsInput): Options {
  const { runtime } = input;
  const options: Options = {
    cwd: input.cwd,
    tools: [...runtime.tools],
    allowedTools: [...runtime.allowedTools],
    disallowedTools: [...runtime.disallowedTools],
    permissionMode: (runtime.permissionMode ?? "default") as PermissionMode,
    settingSources: [],
    strictMcpConfig: true,
    // Only the harness's own forge MCP server, in a forge task whose variant reaches it by MCP.
    mcpServers: input.forge?.mcp
      ? { [input.forge.mcp.server]: { type: "http", url: input.forge.endpoint.url } }
      : {},
    persistSession: false,
    skills: [],
    env,
    abortController,
    systemPrompt: { type: "preset", preset: "claude_code" },
    hooks: { PreToolUse: [{ hooks: [gate.preToolUse], onFailure: "block" }] },
    canUseTool: gate.canUseTool,
    stderr,
  };
  if (runtime.model !== undefined) options.model = runtime.model;
  if (runtime.maxTurns !== undefined) options.maxTurns = runtime.maxTurns;
  if (pathToClaudeCodeExecutable !== undefined) {
    options.pathToClaudeCodeExecutable = pathToClaudeCodeExecutable;
  }
  if (spawnClaudeCodeProcess !== undefined) options.spawnClaudeCodeProcess = spawnClaudeCodeProcess;
  return options;
}

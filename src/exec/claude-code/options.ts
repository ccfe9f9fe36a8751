// The exact options a trial hands to the Agent SDK's query(): nothing is left to Claude Code's
// defaults that could read the user's settings, sessions, MCP servers or environment.
import type { Options, PermissionMode } from "@anthropic-ai/claude-agent-sdk";
import type { ExecutorRunInput } from "../types.js";
import type { PermissionGate } from "./permissions.js";
import type { ClaudeSetupOptions } from "./setup.js";

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
  /** The variant's setup: its plugin, skills, MCP servers, subagents, hooks and instructions. */
  setup?: ClaudeSetupOptions;
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
  setup,
}: QueryOptionsInput): Options {
  const { runtime } = input;
  const setupHooks = setup?.hooks ?? {};
  const options: Options = {
    cwd: input.cwd,
    tools: [...new Set([...runtime.tools, ...(setup?.tools ?? [])])],
    allowedTools: [...runtime.allowedTools],
    disallowedTools: [...runtime.disallowedTools],
    permissionMode: (runtime.permissionMode ?? "default") as PermissionMode,
    settingSources: [],
    strictMcpConfig: true,
    // The harness's own forge MCP server, in a forge task whose variant reaches it by MCP, and
    // the variant's own servers (relayed from their sandbox; assemble refuses one named forge).
    mcpServers: {
      ...setup?.mcpServers,
      ...(input.forge?.mcp
        ? { [input.forge.mcp.server]: { type: "http" as const, url: input.forge.endpoint.url } }
        : {}),
    },
    // Only the setup's own plugin: its skills, and no skill of anyone else's.
    plugins: [...(setup?.plugins ?? [])],
    skills: [...(setup?.skills ?? [])],
    ...(setup !== undefined && Object.keys(setup.agents).length > 0
      ? { agents: { ...setup.agents } }
      : {}),
    persistSession: false,
    env,
    abortController,
    systemPrompt: {
      type: "preset",
      preset: "claude_code",
      ...(setup?.systemPromptAppend === undefined ? {} : { append: setup.systemPromptAppend }),
    },
    // The policy's hook decides every call; a PreToolUse hook of the setup's may refuse more.
    hooks: {
      ...setupHooks,
      PreToolUse: [
        { hooks: [gate.preToolUse], onFailure: "block" },
        ...(setupHooks.PreToolUse ?? []),
      ],
    },
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

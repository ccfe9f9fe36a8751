// Messages of the Claude Agent SDK's own types, and a fake `query()` that records what it was
// given, for executor tests that must not start the real Claude Code binary.
import type {
  HookCallbackMatcher,
  ModelUsage,
  Options,
  PermissionResult,
  SDKAssistantMessage,
  SDKAssistantMessageError,
  SDKMessage,
  SDKResultError,
  SDKResultSuccess,
  SDKSystemMessage,
  SDKUserMessage,
  SyncHookJSONOutput,
} from "@anthropic-ai/claude-agent-sdk";

type Uuid = SDKSystemMessage["uuid"];
export const SESSION_ID = "5f1c2b3a-0000-4000-8000-000000000001";
let uuidCounter = 0;
function uuid(): Uuid {
  uuidCounter += 1;
  return `00000000-0000-4000-8000-${String(uuidCounter).padStart(12, "0")}` as Uuid;
}

export function initMessage(overrides: Partial<SDKSystemMessage> = {}): SDKSystemMessage {
  return {
    type: "system",
    subtype: "init",
    apiKeySource: "ANTHROPIC_API_KEY",
    claude_code_version: "2.1.332",
    cwd: "/trial",
    tools: ["Read", "Edit", "Bash"],
    mcp_servers: [],
    model: "claude-sonnet-4-5",
    permissionMode: "default",
    slash_commands: [],
    output_style: "default",
    skills: [],
    plugins: [],
    uuid: uuid(),
    session_id: SESSION_ID,
    ...overrides,
  };
}

type Block =
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> };

export function assistantMessage(
  blocks: Block[],
  options: { model?: string; error?: SDKAssistantMessageError } = {},
): SDKAssistantMessage {
  return {
    type: "assistant",
    message: {
      id: `msg_${uuidCounter}`,
      container: null,
      content: blocks.map((block) =>
        block.type === "text" ? { type: "text", text: block.text, citations: null } : block,
      ),
      context_management: null,
      diagnostics: null,
      model: options.model ?? "claude-sonnet-4-5",
      role: "assistant",
      stop_details: null,
      stop_reason: blocks.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn",
      stop_sequence: null,
      type: "message",
      usage: {
        cache_creation: null,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        fallback_credit: null,
        inference_geo: null,
        input_tokens: 10,
        iterations: null,
        output_tokens: 1,
        output_tokens_details: null,
        server_tool_use: null,
        service_tier: null,
        speed: null,
      },
    },
    parent_tool_use_id: null,
    ...(options.error === undefined ? {} : { error: options.error }),
    uuid: uuid(),
    session_id: SESSION_ID,
  };
}

export function toolResultMessage(toolUseId: string, text: string): SDKUserMessage {
  return {
    type: "user",
    message: {
      role: "user",
      content: [{ type: "tool_result", tool_use_id: toolUseId, content: text }],
    },
    parent_tool_use_id: null,
  };
}

export function modelUsage(overrides: Partial<ModelUsage> = {}): ModelUsage {
  return {
    inputTokens: 100,
    outputTokens: 20,
    cacheReadInputTokens: 30,
    cacheCreationInputTokens: 10,
    webSearchRequests: 0,
    costUSD: 0.01,
    contextWindow: 200_000,
    maxOutputTokens: 32_000,
    ...overrides,
  };
}

const ZERO_USAGE: SDKResultSuccess["usage"] = {
  cache_creation: { ephemeral_1h_input_tokens: 0, ephemeral_5m_input_tokens: 0 },
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
  fallback_credit: null,
  inference_geo: "",
  input_tokens: 0,
  iterations: [],
  output_tokens: 0,
  output_tokens_details: { thinking_tokens: 0 },
  server_tool_use: { web_search_requests: 0, web_fetch_requests: 0 },
  service_tier: "standard",
  speed: "standard",
};

export function resultSuccess(overrides: Partial<SDKResultSuccess> = {}): SDKResultSuccess {
  return {
    type: "result",
    subtype: "success",
    duration_ms: 1234,
    duration_api_ms: 456,
    is_error: false,
    num_turns: 3,
    result: "Fixed the bug.",
    stop_reason: "end_turn",
    total_cost_usd: 0.0123,
    usage: ZERO_USAGE,
    modelUsage: {},
    permission_denials: [],
    terminal_reason: "completed",
    uuid: uuid(),
    session_id: SESSION_ID,
    ...overrides,
  };
}

export function resultError(
  subtype: SDKResultError["subtype"],
  overrides: Partial<SDKResultError> = {},
): SDKResultError {
  return {
    type: "result",
    subtype,
    duration_ms: 100,
    duration_api_ms: 50,
    is_error: true,
    num_turns: 2,
    stop_reason: null,
    total_cost_usd: 0.001,
    usage: ZERO_USAGE,
    modelUsage: {},
    permission_denials: [],
    errors: [],
    uuid: uuid(),
    session_id: SESSION_ID,
    ...overrides,
  };
}

/** An error result of an API failure, as Claude Code reports one: success subtype, is_error. */
export function apiErrorResult(text: string, status: number | null): SDKResultSuccess {
  return resultSuccess({
    is_error: true,
    result: text,
    api_error_status: status,
    terminal_reason: "api_error",
    num_turns: 1,
    stop_reason: "stop_sequence",
    total_cost_usd: 0,
  });
}

export interface QueryCall {
  prompt: string;
  options: Options;
}

/** A fake SDK module whose query() records its arguments and plays `run`. */
export function fakeClaudeSdk(
  run: (call: QueryCall) => AsyncGenerator<SDKMessage | unknown, void>,
): { sdk: { query(params: QueryCall): AsyncGenerator<unknown, void> }; calls: QueryCall[] } {
  const calls: QueryCall[] = [];
  const sdk = {
    query(params: { prompt: string | AsyncIterable<SDKUserMessage>; options?: Options }) {
      if (typeof params.prompt !== "string") throw new Error("fake: expected a string prompt");
      const call = { prompt: params.prompt, options: params.options ?? {} };
      calls.push(call);
      return run(call);
    },
  };
  return { sdk, calls };
}

/**
 * Plays one tool call the way Claude Code does: the PreToolUse hook first, then (unless the
 * hook denied, and only when Claude Code would ask) canUseTool.
 */
export async function simulateToolCall(
  options: Options,
  call: { name: string; input: Record<string, unknown>; id: string; asksCanUseTool?: boolean },
): Promise<{ hook: SyncHookJSONOutput; permission: PermissionResult | null }> {
  const matcher = options.hooks?.PreToolUse?.[0] as HookCallbackMatcher | undefined;
  const hook = matcher?.hooks[0];
  if (!hook) throw new Error("fake: no PreToolUse hook was registered");
  const signal = new AbortController().signal;
  const output = (await hook(
    {
      hook_event_name: "PreToolUse",
      tool_name: call.name,
      tool_input: call.input,
      tool_use_id: call.id,
      session_id: SESSION_ID,
      transcript_path: "/dev/null",
      cwd: "/trial",
    },
    call.id,
    { signal },
  )) as SyncHookJSONOutput;
  const denied =
    output.hookSpecificOutput?.hookEventName === "PreToolUse" &&
    output.hookSpecificOutput.permissionDecision === "deny";
  if (denied || call.asksCanUseTool === false || !options.canUseTool) {
    return { hook: output, permission: null };
  }
  const permission = await options.canUseTool(call.name, call.input, {
    signal,
    toolUseID: call.id,
    requestId: `req-${call.id}`,
  });
  return { hook: output, permission };
}

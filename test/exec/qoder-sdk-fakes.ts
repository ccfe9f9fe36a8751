// A fake @qoder-ai/qoder-agent-sdk for the qoder executor's tests: query() runs a script that
// yields messages of the SDK's own types and can play the CLI's part in a tool call (PreToolUse
// hook, then canUseTool, then the tool itself on a real file).
import { mkdir, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import type {
  HookCallback,
  ModelUsage,
  NonNullableUsage,
  Options,
  PermissionResult,
  SDKAssistantMessage,
  SDKMessage,
  SDKResultError,
  SDKResultSuccess,
  SDKSystemInitMessage,
  SDKUserMessage,
  SyncHookJSONOutput,
} from "@qoder-ai/qoder-agent-sdk";
import type { QoderSdk } from "../../src/exec/qoder/index.js";

export const SESSION_ID = "0b8e4c1e-qoder-session";
export const CLI_VERSION = "1.1.52-test";
/** Stands in for `ProcessTransport.default`; the executor must pass it through untouched. */
export const PROCESS_TRANSPORT = Object.freeze({ kind: "fake-process-transport" });

export interface QueryCall {
  prompt: string;
  options: Options;
}

export type Script = (call: QueryCall) => AsyncGenerator<SDKMessage, void, undefined>;

export function fakeQoderSdk(script: Script): { sdk: QoderSdk; calls: QueryCall[] } {
  const calls: QueryCall[] = [];
  const sdk: QoderSdk = {
    ProcessTransport: { default: PROCESS_TRANSPORT },
    query(params) {
      const call = { prompt: params.prompt, options: (params.options ?? {}) as Options };
      calls.push(call);
      return script(call);
    },
  };
  return { sdk, calls };
}

let uuid = 0;
const nextUuid = () => `uuid-${++uuid}`;

export function initMessage(overrides: Partial<SDKSystemInitMessage> = {}): SDKMessage {
  const init: SDKSystemInitMessage = {
    type: "system",
    subtype: "init",
    apiKeySource: "user",
    qodercli_version: CLI_VERSION,
    protocol_version: "1.0.0",
    cwd: "/trial",
    tools: ["Read", "Write", "Edit", "Bash"],
    mcp_servers: [],
    model: "performance",
    permissionMode: "default",
    slash_commands: [],
    output_style: "default",
    skills: [],
    plugins: [],
    uuid: nextUuid(),
    session_id: SESSION_ID,
    ...overrides,
  };
  return init;
}

export function usage(partial: Partial<NonNullableUsage> = {}): NonNullableUsage {
  return {
    cache_creation: { ephemeral_1h_input_tokens: 0, ephemeral_5m_input_tokens: 0 },
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    inference_geo: "",
    input_tokens: 0,
    iterations: [],
    output_tokens: 0,
    server_tool_use: { web_fetch_requests: 0, web_search_requests: 0 },
    service_tier: "standard",
    speed: "normal",
    ...partial,
  };
}

export function modelUsage(partial: Partial<ModelUsage> = {}): ModelUsage {
  return {
    inputTokens: 0,
    outputTokens: 0,
    cacheReadInputTokens: 0,
    cacheCreationInputTokens: 0,
    webSearchRequests: 0,
    costUSD: 0,
    contextWindow: 200_000,
    maxOutputTokens: 32_000,
    ...partial,
  };
}

export function assistantMessage(
  content: SDKAssistantMessage["message"]["content"],
  extra: {
    model?: string;
    id?: string;
    usage?: Partial<NonNullableUsage>;
    error?: SDKAssistantMessage["error"];
  } = {},
): SDKMessage {
  const message: SDKAssistantMessage = {
    type: "assistant",
    message: {
      id: extra.id ?? `msg-${nextUuid()}`,
      type: "message",
      role: "assistant",
      content,
      model: extra.model ?? "qoder-performance-model",
      stop_reason: "end_turn",
      usage: usage(extra.usage),
    },
    parent_tool_use_id: null,
    uuid: nextUuid(),
    session_id: SESSION_ID,
    ...(extra.error === undefined ? {} : { error: extra.error, isApiErrorMessage: true as const }),
  };
  return message;
}

export function toolResultMessage(toolUseId: string, text: string, isError = false): SDKMessage {
  const message: SDKUserMessage = {
    type: "user",
    message: {
      role: "user",
      content: [{ type: "tool_result", tool_use_id: toolUseId, content: text, is_error: isError }],
    },
    parent_tool_use_id: null,
    session_id: SESSION_ID,
  };
  return message;
}

export function resultSuccess(partial: Partial<SDKResultSuccess> = {}): SDKMessage {
  const result: SDKResultSuccess = {
    type: "result",
    subtype: "success",
    duration_ms: 1234,
    duration_api_ms: 987,
    is_error: false,
    num_turns: 2,
    result: "Fixed the bug.",
    stop_reason: "end_turn",
    total_cost_usd: 0,
    usage: usage(),
    modelUsage: {},
    permission_denials: [],
    uuid: nextUuid(),
    session_id: SESSION_ID,
    ...partial,
  };
  return result;
}

export function resultError(
  subtype: SDKResultError["subtype"],
  errors: string[],
  partial: Partial<SDKResultError> = {},
): SDKMessage {
  const result: SDKResultError = {
    type: "result",
    subtype,
    duration_ms: 50,
    duration_api_ms: 0,
    is_error: true,
    num_turns: 0,
    stop_reason: null,
    total_cost_usd: 0,
    usage: usage(),
    modelUsage: {},
    permission_denials: [],
    errors,
    uuid: nextUuid(),
    session_id: SESSION_ID,
    ...partial,
  };
  return result;
}

export interface SimulatedCall {
  /** What the PreToolUse hook answered (undefined when the call skipped the hook). */
  hook?: SyncHookJSONOutput;
  /** What canUseTool answered (undefined when the hook already denied, or canUseTool was skipped). */
  permission?: PermissionResult;
  /** Whether the tool ran. */
  ran: boolean;
}

/**
 * Plays the CLI's part in one tool call: the PreToolUse hook first (unless `skipHook`), then
 * canUseTool (unless the hook denied or `skipCanUseTool`), then the tool itself; `Write` really
 * writes its file, at the path canUseTool handed back.
 */
export async function simulateToolCall(
  options: Options,
  toolUseId: string,
  toolName: string,
  input: Record<string, unknown>,
  flags: { skipHook?: boolean; skipCanUseTool?: boolean } = {},
): Promise<SimulatedCall> {
  const outcome: SimulatedCall = { ran: false };
  const signal = new AbortController().signal;
  if (!flags.skipHook) {
    const hook = options.hooks?.PreToolUse?.[0]?.hooks[0] as HookCallback | undefined;
    if (hook === undefined) throw new Error("the executor registered no PreToolUse hook");
    outcome.hook = (await hook(
      {
        hook_event_name: "PreToolUse",
        session_id: SESSION_ID,
        transcript_path: "/dev/null",
        cwd: options.cwd ?? "",
        tool_name: toolName,
        tool_input: input,
        tool_use_id: toolUseId,
      },
      toolUseId,
      { signal },
    )) as SyncHookJSONOutput;
    const verdict = outcome.hook.hookSpecificOutput;
    if (verdict?.hookEventName === "PreToolUse" && verdict.permissionDecision === "deny") {
      return outcome;
    }
  }
  let effectiveInput = input;
  if (!flags.skipCanUseTool) {
    if (options.canUseTool === undefined) throw new Error("the executor passed no canUseTool");
    outcome.permission = await options.canUseTool(toolName, input, {
      signal,
      toolUseID: toolUseId,
    });
    if (outcome.permission.behavior === "deny") return outcome;
    effectiveInput = outcome.permission.updatedInput ?? input;
  }
  if (toolName === "Write") {
    const path = String(effectiveInput.file_path);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, String(effectiveInput.content));
  }
  outcome.ran = true;
  return outcome;
}

/** A fake that waits for its abort controller, then throws the SDK's AbortError. */
export async function* waitsForAbort({ options }: QueryCall): AsyncGenerator<SDKMessage, void> {
  yield initMessage();
  const signal = options.abortController?.signal;
  await new Promise<void>((resolve) => {
    if (signal?.aborted) resolve();
    else signal?.addEventListener("abort", () => resolve(), { once: true });
  });
  const error = new Error("Operation was aborted");
  error.name = "AbortError";
  throw error;
}

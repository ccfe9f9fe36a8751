// A loopback model server that speaks the OpenAI Responses API (`POST /v1/responses`, streamed
// as server-sent events) well enough for the real Codex CLI to run whole sessions offline. It
// plays a script of model turns (text, function calls such as Codex's `exec_command`, freeform
// custom tool calls such as `apply_patch`) and records every request; nothing leaves 127.0.0.1.
import type { IncomingMessage, ServerResponse } from "node:http";
import { redactText } from "../redact.js";
import {
  asRecord,
  bearerToken,
  chunks,
  listenLoopback,
  parseJsonBody,
  requestUrl,
  safeHeaders,
  sendJson,
  sendJsonError,
  startSse,
  writeSseEvent,
} from "./http.js";

/** One output item of a scripted model turn. */
export type ResponsesScriptItem =
  | { type: "message"; text: string }
  | {
      /** A JSON function tool call, e.g. Codex's `exec_command` with `{ cmd }`. */
      type: "function_call";
      name: string;
      /** The namespace tool it belongs to (Codex offers an MCP server as `mcp__<server>`). */
      namespace?: string;
      /** An object is sent as its JSON text; a string is sent as is. */
      arguments: Record<string, unknown> | string;
    }
  | {
      /** A freeform tool call, e.g. Codex's `apply_patch` with the patch as its input. */
      type: "custom_tool_call";
      name: string;
      input: string;
    };

/** Token counts reported for one turn (Responses API meaning: `input_tokens` includes the cached ones). */
interface ResponsesScriptUsage {
  input_tokens: number;
  cached_tokens: number;
  output_tokens: number;
  reasoning_tokens: number;
}

/** An API error the service could answer with, as the real API spells it. */
interface ResponsesScriptError {
  status: number;
  type: string;
  code?: string;
  message: string;
}

/** One model turn: output items, or an API error in place of a response. */
export interface ResponsesScriptTurn {
  output?: readonly ResponsesScriptItem[];
  usage?: Partial<ResponsesScriptUsage>;
  error?: ResponsesScriptError;
  /** Waits this long before answering. Cut short by `close()`. */
  delayMs?: number;
}

export interface ResponsesLoopbackOptions {
  /**
   * Model turns in order. Turn i answers a request whose input holds the tool calls of turns
   * before i (recognized by the call ids this server gave them).
   */
  script: readonly ResponsesScriptTurn[];
  /** Port on 127.0.0.1; 0 (default) picks a free one. */
  port?: number;
  /** When set, a request without `Authorization: Bearer <apiKey>` gets a 401 like the real API. */
  apiKey?: string;
  /** Usage reported for turns that do not set their own. */
  usage?: Partial<ResponsesScriptUsage>;
  /** Requests answered before the server refuses more (a runaway client cannot loop forever). Default 500. */
  maxRequests?: number;
  /** Largest request body accepted. Default 32 MiB. */
  maxBodyBytes?: number;
}

/** What the server recorded about one request; credentials never appear in it. */
interface ResponsesLoopbackRequest {
  seq: number;
  method: string;
  path: string;
  /** `turn` played a script turn; `rejected` was refused (auth, bad body, budget); else unknown route. */
  kind: "turn" | "rejected" | "not_found";
  /** Index of the script turn played, null for other kinds. */
  turnIndex: number | null;
  status: number;
  /** How the client authenticated; the value itself is never stored. */
  credential: "bearer" | "none";
  model: string | null;
  stream: boolean | null;
  /** Names (or types) of the tools the request offered. */
  toolNames: string[];
  /** Types of the request's input items, in order (`message`, `function_call_output`, …). */
  inputTypes: string[];
  /** Outputs of tool calls this server asked for, as the client returned them (redacted, truncated). */
  toolOutputs: { callId: string; text: string }[];
  /** Headers with credential values replaced. */
  headers: Record<string, string>;
}

export interface ResponsesLoopback {
  /** `http://127.0.0.1:<port>/v1`: the base URL for a Responses client (`base_url`, `OPENAI_BASE_URL`). */
  readonly url: string;
  readonly port: number;
  /** A copy of the request log so far. */
  readonly requests: ResponsesLoopbackRequest[];
  /** Stops listening and drops open connections. Safe to call more than once. */
  close(): Promise<void>;
}

/** A Codex shell call: `exec_command` with the command line in `cmd`. */
export function execCommand(cmd: string): ResponsesScriptItem {
  return { type: "function_call", name: "exec_command", arguments: { cmd } };
}

/** A Codex `apply_patch` call; `patch` is the whole `*** Begin Patch … *** End Patch` text. */
export function applyPatch(patch: string): ResponsesScriptItem {
  return { type: "custom_tool_call", name: "apply_patch", input: patch };
}

const DEFAULT_USAGE: ResponsesScriptUsage = {
  input_tokens: 120,
  cached_tokens: 20,
  output_tokens: 30,
  reasoning_tokens: 5,
};

const CREDENTIAL_HEADERS = new Set(["authorization", "proxy-authorization", "cookie", "api-key"]);
const TOOL_OUTPUT_TEXT_LIMIT = 2000;
const CALL_ID = /^call_loopback_(\d+)_\d+$/;

function inputItems(body: Record<string, unknown>): Record<string, unknown>[] {
  return Array.isArray(body.input)
    ? body.input.map(asRecord).filter((i): i is Record<string, unknown> => i !== undefined)
    : [];
}

/** The next turn: one past the latest turn whose calls the client sent back. */
function turnIndexOf(items: readonly Record<string, unknown>[]): number {
  let latest = -1;
  for (const item of items) {
    const match = typeof item.call_id === "string" ? CALL_ID.exec(item.call_id) : null;
    if (match) latest = Math.max(latest, Number(match[1]));
  }
  return latest + 1;
}

function outputText(output: unknown): string {
  if (typeof output === "string") return output;
  if (Array.isArray(output)) {
    return output
      .map((part) => {
        const record = asRecord(part);
        return typeof record?.text === "string" ? record.text : "";
      })
      .join("");
  }
  const record = asRecord(output);
  return typeof record?.content === "string" ? record.content : "";
}

function sendError(response: ServerResponse, error: ResponsesScriptError, requestId: string) {
  sendJsonError(
    response,
    error.status,
    {
      error: { message: error.message, type: error.type, code: error.code ?? null, param: null },
    },
    { "x-request-id": requestId },
  );
}

type WireItem = Record<string, unknown> & { id: string; type: string };

function wireItem(item: ResponsesScriptItem, turnIndex: number, index: number): WireItem {
  const callId = `call_loopback_${turnIndex}_${index}`;
  switch (item.type) {
    case "message":
      return {
        id: `msg_loopback_${turnIndex}_${index}`,
        type: "message",
        role: "assistant",
        status: "completed",
        content: [{ type: "output_text", text: item.text, annotations: [] }],
      };
    case "function_call":
      return {
        id: `fc_loopback_${turnIndex}_${index}`,
        type: "function_call",
        status: "completed",
        call_id: callId,
        name: item.name,
        ...(item.namespace === undefined ? {} : { namespace: item.namespace }),
        arguments:
          typeof item.arguments === "string" ? item.arguments : JSON.stringify(item.arguments),
      };
    case "custom_tool_call":
      return {
        id: `ctc_loopback_${turnIndex}_${index}`,
        type: "custom_tool_call",
        status: "completed",
        call_id: callId,
        name: item.name,
        input: item.input,
      };
  }
}

function usageBlock(usage: ResponsesScriptUsage) {
  return {
    input_tokens: usage.input_tokens,
    input_tokens_details: { cached_tokens: usage.cached_tokens },
    output_tokens: usage.output_tokens,
    output_tokens_details: { reasoning_tokens: usage.reasoning_tokens },
    total_tokens: usage.input_tokens + usage.output_tokens,
  };
}

function writeStream(
  response: ServerResponse,
  base: Record<string, unknown>,
  items: WireItem[],
  usage: ResponsesScriptUsage,
  requestId: string,
) {
  startSse(response, { "x-request-id": requestId });
  let sequence = 0;
  const event = (type: string, data: Record<string, unknown>) => {
    writeSseEvent(response, type, { type, sequence_number: sequence, ...data });
    sequence += 1;
  };
  event("response.created", { response: { ...base, status: "in_progress", output: [] } });
  event("response.in_progress", { response: { ...base, status: "in_progress", output: [] } });
  items.forEach((item, output_index) => {
    if (item.type === "message") {
      const text = ((item.content as { text: string }[])[0]?.text ?? "") as string;
      event("response.output_item.added", {
        output_index,
        item: { ...item, status: "in_progress", content: [] },
      });
      const part = { type: "output_text", text: "", annotations: [] };
      event("response.content_part.added", {
        item_id: item.id,
        output_index,
        content_index: 0,
        part,
      });
      for (const delta of chunks(text, 3)) {
        event("response.output_text.delta", {
          item_id: item.id,
          output_index,
          content_index: 0,
          delta,
        });
      }
      event("response.output_text.done", {
        item_id: item.id,
        output_index,
        content_index: 0,
        text,
      });
      event("response.content_part.done", {
        item_id: item.id,
        output_index,
        content_index: 0,
        part: { ...part, text },
      });
    } else if (item.type === "function_call") {
      const args = item.arguments as string;
      event("response.output_item.added", {
        output_index,
        item: { ...item, status: "in_progress", arguments: "" },
      });
      for (const delta of chunks(args, 2)) {
        event("response.function_call_arguments.delta", { item_id: item.id, output_index, delta });
      }
      event("response.function_call_arguments.done", {
        item_id: item.id,
        output_index,
        arguments: args,
      });
    } else {
      const input = item.input as string;
      event("response.output_item.added", {
        output_index,
        item: { ...item, status: "in_progress", input: "" },
      });
      for (const delta of chunks(input, 2)) {
        event("response.custom_tool_call_input.delta", { item_id: item.id, output_index, delta });
      }
      event("response.custom_tool_call_input.done", { item_id: item.id, output_index, input });
    }
    event("response.output_item.done", { output_index, item });
  });
  event("response.completed", {
    response: { ...base, status: "completed", output: items, usage: usageBlock(usage) },
  });
  response.end();
}

/**
 * Starts the server on 127.0.0.1. Point a Responses client at `url` (for Codex: a model provider
 * with `base_url = url` and `wire_api = "responses"`). Turns are chosen from the call ids the
 * client sends back, so a retried request gets the same answer and the script advances only when
 * the client has acted on a turn; past the end of the script every request gets a short text.
 */
export async function startResponsesLoopback(
  options: ResponsesLoopbackOptions,
): Promise<ResponsesLoopback> {
  const script = [...options.script];
  const maxRequests = options.maxRequests ?? 500;
  const maxBodyBytes = options.maxBodyBytes ?? 32 * 1024 * 1024;
  const requests: ResponsesLoopbackRequest[] = [];

  const handle = (
    request: IncomingMessage,
    response: ServerResponse,
    raw: Buffer,
    requestSeq: number,
  ) => {
    const requestId = `req_loopback_${requestSeq}`;
    const url = requestUrl(request);
    const bearer = bearerToken(request);
    const parsed = parseJsonBody(raw);
    const body = asRecord(parsed) ?? {};
    const items = inputItems(body);
    const entry: ResponsesLoopbackRequest = {
      seq: requestSeq,
      method: request.method ?? "GET",
      path: url.pathname,
      kind: "not_found",
      turnIndex: null,
      status: 404,
      credential: bearer === null ? "none" : "bearer",
      model: typeof body.model === "string" ? body.model : null,
      stream: typeof body.stream === "boolean" ? body.stream : null,
      toolNames: Array.isArray(body.tools)
        ? body.tools.map((tool) => {
            const record = asRecord(tool);
            return String(record?.name ?? record?.type ?? "?");
          })
        : [],
      inputTypes: items.map((item) => String(item.type ?? item.role ?? "?")),
      toolOutputs: items
        .filter((item) => typeof item.type === "string" && item.type.endsWith("_call_output"))
        .filter((item) => typeof item.call_id === "string" && CALL_ID.test(item.call_id))
        .map((item) => ({
          callId: item.call_id as string,
          text: redactText(outputText(item.output)).slice(0, TOOL_OUTPUT_TEXT_LIMIT),
        })),
      headers: safeHeaders(request, CREDENTIAL_HEADERS),
    };
    if (requests.length < maxRequests) requests.push(entry);
    const finish = (kind: ResponsesLoopbackRequest["kind"], status: number) => {
      entry.kind = kind;
      entry.status = status;
    };

    if (requestSeq > maxRequests) {
      finish("rejected", 503);
      return sendError(
        response,
        {
          status: 503,
          type: "server_error",
          message: `loopback: request budget of ${maxRequests} exhausted`,
        },
        requestId,
      );
    }
    if (request.method !== "POST" || url.pathname !== "/v1/responses") {
      return sendError(
        response,
        {
          status: 404,
          type: "invalid_request_error",
          message: `loopback: no route ${request.method} ${url.pathname}`,
        },
        requestId,
      );
    }
    if (options.apiKey !== undefined && bearer !== options.apiKey) {
      finish("rejected", 401);
      return sendError(
        response,
        {
          status: 401,
          type: "invalid_request_error",
          code: "invalid_api_key",
          message: "Incorrect API key provided",
        },
        requestId,
      );
    }
    if (parsed === undefined || !Array.isArray(body.input)) {
      finish("rejected", 400);
      return sendError(
        response,
        {
          status: 400,
          type: "invalid_request_error",
          message: "loopback: the body must be JSON with an `input` list",
        },
        requestId,
      );
    }

    const turnIndex = turnIndexOf(items);
    const turn = script[turnIndex] ?? {
      output: [{ type: "message", text: "(the loopback script is exhausted)" }],
    };
    entry.turnIndex = turnIndex;
    finish("turn", turn.error ? turn.error.status : 200);
    const answer = () => {
      if (turn.error) return sendError(response, turn.error, requestId);
      const usage: ResponsesScriptUsage = { ...DEFAULT_USAGE, ...options.usage, ...turn.usage };
      const wire = (turn.output ?? []).map((item, index) => wireItem(item, turnIndex, index));
      const base = {
        id: `resp_loopback_${requestSeq}`,
        object: "response",
        created_at: Math.floor(Date.now() / 1000),
        model: entry.model ?? "loopback",
      };
      if (body.stream === true) return writeStream(response, base, wire, usage, requestId);
      return sendJson(
        response,
        200,
        { ...base, status: "completed", output: wire, usage: usageBlock(usage) },
        { "x-request-id": requestId },
      );
    };
    if (turn.delayMs !== undefined && turn.delayMs > 0) http.later(turn.delayMs, answer);
    else answer();
  };

  // `http` is assigned before any request can reach `handle`: requests arrive only once it listens.
  const http = await listenLoopback({
    port: options.port,
    maxBodyBytes,
    handle,
    sendError,
    errorTypes: { tooLarge: "invalid_request_error", crash: "server_error" },
  });
  return {
    url: `http://127.0.0.1:${http.port}/v1`,
    port: http.port,
    get requests() {
      return requests.map((r) => ({
        ...r,
        toolNames: [...r.toolNames],
        inputTypes: [...r.inputTypes],
      }));
    },
    close: () => http.close(),
  };
}

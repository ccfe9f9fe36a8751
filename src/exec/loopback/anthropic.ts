// A loopback model server that speaks the Anthropic Messages API well enough for the real
// Claude Code client (and Pi) to run whole sessions offline: streamed SSE events exactly as the
// service sends them, plain JSON for non-streaming calls, token counting and the reachability
// probe. It plays a script of assistant turns; nothing leaves 127.0.0.1.
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

/** One content block of a scripted assistant turn. */
type AnthropicScriptBlock =
  | { type: "text"; text: string }
  | {
      type: "tool_use";
      /** The tool as the client names it (`Read`, `Write`, `Edit`, `Bash`, …). */
      name: string;
      input: Record<string, unknown>;
      /** Defaults to a stable id derived from the turn and block position. */
      id?: string;
    };

/** Token counts reported for one scripted turn (Messages API field names). */
interface AnthropicScriptUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
}

/** An API error the service could answer with (status and `error.type` as the real API spells them). */
interface AnthropicScriptError {
  status: number;
  type: string;
  message: string;
}

/** One assistant turn: content blocks, or an API error in place of a message. */
export interface AnthropicScriptTurn {
  content?: readonly AnthropicScriptBlock[];
  /** Default: `tool_use` when the turn calls a tool, else `end_turn`. */
  stopReason?: "end_turn" | "tool_use" | "max_tokens" | "stop_sequence";
  usage?: Partial<AnthropicScriptUsage>;
  error?: AnthropicScriptError;
  /** Waits this long before answering (to exercise client timeouts). Cut short by `close()`. */
  delayMs?: number;
}

export interface AnthropicLoopbackOptions {
  /** Assistant turns in order. Turn i answers a request whose history holds i assistant messages. */
  script: readonly AnthropicScriptTurn[];
  /** Port on 127.0.0.1; 0 (default) picks a free one. */
  port?: number;
  /** When set, a request carrying any other credential (or none) gets a 401 like the real API. */
  apiKey?: string;
  /** Text for side requests that offer no tools while the scripted turn calls one. */
  sideReply?: string;
  /** Usage reported for turns that do not set their own. */
  usage?: Partial<AnthropicScriptUsage>;
  /** Requests answered before the server refuses more (a runaway client cannot loop forever). Default 500. */
  maxRequests?: number;
  /** Largest request body accepted. Default 32 MiB. */
  maxBodyBytes?: number;
}

/** What the server recorded about one request; credentials never appear in it. */
interface AnthropicLoopbackRequest {
  seq: number;
  method: string;
  path: string;
  /** `turn` played a script turn; `side` got the side reply; the rest name the endpoint. */
  kind: "turn" | "side" | "count_tokens" | "hello" | "rejected" | "not_found";
  /** Index of the script turn played, null for other kinds. */
  turnIndex: number | null;
  status: number;
  /** How the client authenticated; the value itself is never stored. */
  credential: "x-api-key" | "bearer" | "none";
  /** Names of the credential headers the request carried (lower case, sorted). */
  credentialHeaders: string[];
  model: string | null;
  stream: boolean | null;
  toolNames: string[];
  /** The request's system prompt as text (its blocks joined), the first 64 KiB. */
  system: string;
  messageCount: number;
  /** Tool results the client sent back in its last user message (text redacted, truncated). */
  toolResults: { toolUseId: string; isError: boolean; text: string }[];
  /** Headers with credential values replaced. */
  headers: Record<string, string>;
}

export interface AnthropicLoopback {
  /** `http://127.0.0.1:<port>`: the value for `ANTHROPIC_BASE_URL`. */
  readonly url: string;
  readonly port: number;
  /** A copy of the request log so far. */
  readonly requests: AnthropicLoopbackRequest[];
  /** Stops listening and drops open connections. Safe to call more than once. */
  close(): Promise<void>;
}

const DEFAULT_USAGE: AnthropicScriptUsage = {
  input_tokens: 120,
  output_tokens: 24,
  cache_read_input_tokens: 30,
  cache_creation_input_tokens: 10,
};

const CREDENTIAL_HEADERS = new Set(["x-api-key", "authorization", "proxy-authorization", "cookie"]);
const TOOL_RESULT_TEXT_LIMIT = 2000;

interface ParsedBody {
  system?: unknown;
  model?: unknown;
  stream?: unknown;
  tools?: unknown;
  messages?: unknown;
}

function systemText(body: ParsedBody): string {
  const system = body.system;
  const text =
    typeof system === "string"
      ? system
      : Array.isArray(system)
        ? system.map((block) => asRecord(block)?.text ?? "").join("\n")
        : "";
  return String(text).slice(0, 64 * 1024);
}

function toolNames(body: ParsedBody): string[] {
  if (!Array.isArray(body.tools)) return [];
  return body.tools
    .map((tool) => asRecord(tool)?.name)
    .filter((name): name is string => typeof name === "string");
}

function messages(body: ParsedBody): Record<string, unknown>[] {
  return Array.isArray(body.messages)
    ? body.messages.map(asRecord).filter((m): m is Record<string, unknown> => m !== undefined)
    : [];
}

function blockText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part) => {
      const record = asRecord(part);
      return record?.type === "text" && typeof record.text === "string" ? record.text : "";
    })
    .join("");
}

function lastToolResults(body: ParsedBody): AnthropicLoopbackRequest["toolResults"] {
  const last = messages(body).at(-1);
  if (last?.role !== "user" || !Array.isArray(last.content)) return [];
  const results: AnthropicLoopbackRequest["toolResults"] = [];
  for (const part of last.content) {
    const block = asRecord(part);
    if (block?.type !== "tool_result") continue;
    results.push({
      toolUseId: typeof block.tool_use_id === "string" ? block.tool_use_id : "",
      isError: block.is_error === true,
      text: redactText(blockText(block.content)).slice(0, TOOL_RESULT_TEXT_LIMIT),
    });
  }
  return results;
}

function presentedCredential(request: IncomingMessage): {
  kind: AnthropicLoopbackRequest["credential"];
  value: string | null;
} {
  const apiKey = request.headers["x-api-key"];
  if (typeof apiKey === "string" && apiKey !== "") return { kind: "x-api-key", value: apiKey };
  const bearer = bearerToken(request);
  return bearer === null ? { kind: "none", value: null } : { kind: "bearer", value: bearer };
}

function sendError(response: ServerResponse, error: AnthropicScriptError, requestId: string) {
  sendJsonError(
    response,
    error.status,
    { type: "error", error: { type: error.type, message: error.message }, request_id: requestId },
    { "request-id": requestId },
  );
}

type WireBlock =
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> };

function wireBlocks(turn: AnthropicScriptTurn, turnIndex: number): WireBlock[] {
  return (turn.content ?? []).map((block, blockIndex) =>
    block.type === "text"
      ? { type: "text", text: block.text }
      : {
          type: "tool_use",
          id: block.id ?? `toolu_loopback_${turnIndex}_${blockIndex}`,
          name: block.name,
          input: block.input,
        },
  );
}

function writeStream(
  response: ServerResponse,
  message: { id: string; model: string; usage: AnthropicScriptUsage },
  blocks: WireBlock[],
  stopReason: string,
  requestId: string,
) {
  startSse(response, { "request-id": requestId });
  const event = (name: string, data: unknown) => writeSseEvent(response, name, data);
  event("message_start", {
    type: "message_start",
    message: {
      id: message.id,
      type: "message",
      role: "assistant",
      model: message.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: message.usage.input_tokens,
        cache_creation_input_tokens: message.usage.cache_creation_input_tokens,
        cache_read_input_tokens: message.usage.cache_read_input_tokens,
        output_tokens: 1,
      },
    },
  });
  event("ping", { type: "ping" });
  blocks.forEach((block, index) => {
    if (block.type === "text") {
      event("content_block_start", {
        type: "content_block_start",
        index,
        content_block: { type: "text", text: "" },
      });
      for (const piece of chunks(block.text, 3)) {
        event("content_block_delta", {
          type: "content_block_delta",
          index,
          delta: { type: "text_delta", text: piece },
        });
      }
    } else {
      event("content_block_start", {
        type: "content_block_start",
        index,
        content_block: { type: "tool_use", id: block.id, name: block.name, input: {} },
      });
      for (const piece of chunks(JSON.stringify(block.input), 2)) {
        event("content_block_delta", {
          type: "content_block_delta",
          index,
          delta: { type: "input_json_delta", partial_json: piece },
        });
      }
    }
    event("content_block_stop", { type: "content_block_stop", index });
  });
  event("message_delta", {
    type: "message_delta",
    delta: { stop_reason: stopReason, stop_sequence: null },
    usage: { output_tokens: message.usage.output_tokens },
  });
  event("message_stop", { type: "message_stop" });
  response.end();
}

/**
 * Starts the server on 127.0.0.1. Point a client at `url` (e.g. `ANTHROPIC_BASE_URL`) with any
 * key (or the one given as `apiKey`). Turns are chosen by how many assistant messages the
 * request's history holds, so a retried request gets the same answer and the script advances
 * only when the client has taken a turn. A request that offers no tools while the scripted turn
 * calls one (Claude Code's side requests) gets `sideReply` and does not advance the script.
 */
export async function startAnthropicLoopback(
  options: AnthropicLoopbackOptions,
): Promise<AnthropicLoopback> {
  const script = [...options.script];
  const maxRequests = options.maxRequests ?? 500;
  const maxBodyBytes = options.maxBodyBytes ?? 32 * 1024 * 1024;
  const sideReply = options.sideReply ?? "ok";
  const requests: AnthropicLoopbackRequest[] = [];

  const handle = (
    request: IncomingMessage,
    response: ServerResponse,
    raw: Buffer,
    requestSeq: number,
  ) => {
    const requestId = `req_loopback_${requestSeq}`;
    const url = requestUrl(request);
    const credential = presentedCredential(request);
    // Not JSON: answered below as an invalid request where a body is needed.
    const body: ParsedBody = asRecord(parseJsonBody(raw)) ?? {};
    const entry: AnthropicLoopbackRequest = {
      seq: requestSeq,
      method: request.method ?? "GET",
      path: url.pathname,
      kind: "not_found",
      turnIndex: null,
      status: 404,
      credential: credential.kind,
      credentialHeaders: Object.keys(request.headers)
        .filter((name) => CREDENTIAL_HEADERS.has(name))
        .sort(),
      model: typeof body.model === "string" ? body.model : null,
      stream: typeof body.stream === "boolean" ? body.stream : null,
      toolNames: toolNames(body),
      system: systemText(body),
      messageCount: messages(body).length,
      toolResults: lastToolResults(body),
      headers: safeHeaders(request, CREDENTIAL_HEADERS),
    };
    if (requests.length < maxRequests) requests.push(entry);
    const finish = (kind: AnthropicLoopbackRequest["kind"], status: number) => {
      entry.kind = kind;
      entry.status = status;
    };

    if (requestSeq > maxRequests) {
      finish("rejected", 503);
      return sendError(
        response,
        {
          status: 503,
          type: "api_error",
          message: `loopback: request budget of ${maxRequests} exhausted`,
        },
        requestId,
      );
    }
    if (url.pathname === "/api/hello" && (request.method === "HEAD" || request.method === "GET")) {
      finish("hello", 200);
      response.writeHead(200, { "content-type": "application/json" });
      return response.end(request.method === "HEAD" ? undefined : JSON.stringify({ ok: true }));
    }
    if (request.method !== "POST" || !url.pathname.startsWith("/v1/messages")) {
      return sendError(
        response,
        {
          status: 404,
          type: "not_found_error",
          message: `loopback: no route ${request.method} ${url.pathname}`,
        },
        requestId,
      );
    }
    if (options.apiKey !== undefined && credential.value !== options.apiKey) {
      finish("rejected", 401);
      return sendError(
        response,
        { status: 401, type: "authentication_error", message: "invalid x-api-key" },
        requestId,
      );
    }
    if (url.pathname === "/v1/messages/count_tokens") {
      finish("count_tokens", 200);
      return sendJson(response, 200, { input_tokens: Math.max(1, Math.round(raw.length / 4)) });
    }
    if (url.pathname !== "/v1/messages") {
      return sendError(
        response,
        {
          status: 404,
          type: "not_found_error",
          message: `loopback: no route POST ${url.pathname}`,
        },
        requestId,
      );
    }
    if (!Array.isArray(body.messages)) {
      finish("rejected", 400);
      return sendError(
        response,
        { status: 400, type: "invalid_request_error", message: "messages: Field required" },
        requestId,
      );
    }

    const turnIndex = assistantCount(body);
    const scripted = script[turnIndex] ?? {
      content: [{ type: "text", text: "(the loopback script is exhausted)" }],
    };
    const offersTools = entry.toolNames.length > 0;
    const callsTool = (scripted.content ?? []).some((block) => block.type === "tool_use");
    const isSide = !offersTools && callsTool && scripted.error === undefined;
    const turn: AnthropicScriptTurn = isSide
      ? { content: [{ type: "text", text: sideReply }] }
      : scripted;
    if (isSide) finish("side", 200);
    else {
      entry.turnIndex = turnIndex;
      finish("turn", turn.error ? turn.error.status : 200);
    }
    const answer = () => {
      if (turn.error) return sendError(response, turn.error, requestId);
      answerTurn(response, turn, turnIndex, body, entry, requestSeq, requestId);
    };
    if (!isSide && turn.delayMs !== undefined && turn.delayMs > 0) {
      http.later(turn.delayMs, answer);
    } else answer();
  };

  const answerTurn = (
    response: ServerResponse,
    turn: AnthropicScriptTurn,
    turnIndex: number,
    body: ParsedBody,
    entry: AnthropicLoopbackRequest,
    seq: number,
    requestId: string,
  ) => {
    const usage: AnthropicScriptUsage = { ...DEFAULT_USAGE, ...options.usage, ...turn.usage };
    const blocks = wireBlocks(turn, turnIndex);
    const stopReason =
      turn.stopReason ?? (blocks.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn");
    const message = {
      id: `msg_loopback_${seq}`,
      model: entry.model ?? "loopback",
      usage,
    };
    if (body.stream === true) return writeStream(response, message, blocks, stopReason, requestId);
    return sendJson(
      response,
      200,
      {
        id: message.id,
        type: "message",
        role: "assistant",
        model: message.model,
        content: blocks,
        stop_reason: stopReason,
        stop_sequence: null,
        usage,
      },
      { "request-id": requestId },
    );
  };

  // `http` is assigned before any request can reach `handle`: requests arrive only once it listens.
  const http = await listenLoopback({
    port: options.port,
    maxBodyBytes,
    handle,
    sendError,
    errorTypes: { tooLarge: "request_too_large", crash: "api_error" },
  });
  return {
    url: `http://127.0.0.1:${http.port}`,
    port: http.port,
    get requests() {
      return requests.map((r) => ({ ...r }));
    },
    close: () => http.close(),
  };
}

function assistantCount(body: ParsedBody): number {
  return messages(body).filter((m) => m.role === "assistant").length;
}

// The HTTP scaffolding the loopback model servers share: listening on 127.0.0.1 only, reading a
// bounded request body, numbering requests, JSON and server-sent-event answers, delayed answers
// that close() cuts short, and headers with credentials masked. Each server keeps its own API:
// routes, error bodies, the request log's fields, and the script.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { REDACTED, redactText } from "../redact.js";

export function asRecord(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** The parsed JSON body, or undefined when it is not JSON (an empty body reads as `{}`). */
export function parseJsonBody(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString("utf8") || "{}");
  } catch {
    return undefined;
  }
}

/** The request's path and query, resolved against the server's own origin. */
export function requestUrl(request: IncomingMessage): URL {
  return new URL(request.url ?? "/", "http://127.0.0.1");
}

/** The token of an `Authorization: Bearer …` header, or null. */
export function bearerToken(request: IncomingMessage): string | null {
  const authorization = request.headers.authorization;
  return typeof authorization === "string" && /^bearer\s+/i.test(authorization)
    ? authorization.replace(/^bearer\s+/i, "")
    : null;
}

/** The request's headers for the log: credential headers masked, every other value redacted. */
export function safeHeaders(
  request: IncomingMessage,
  credentialHeaders: ReadonlySet<string>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    out[name] = credentialHeaders.has(name)
      ? REDACTED
      : redactText(Array.isArray(value) ? value.join(", ") : value);
  }
  return out;
}

export function sendJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  response.writeHead(status, { "content-type": "application/json", ...headers });
  response.end(JSON.stringify(body));
}

/**
 * An API error answer. A 429 says "retry now": the clients honour `retry-after`, and a test must
 * not wait out a real back-off.
 */
export function sendJsonError(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string>,
): void {
  const all = { ...headers };
  if (status === 429) all["retry-after"] = "0";
  sendJson(response, status, body, all);
}

/** Starts a server-sent-event answer; write its events with `writeSseEvent`, then end it. */
export function startSse(response: ServerResponse, headers: Record<string, string>): void {
  response.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
    ...headers,
  });
}

export function writeSseEvent(response: ServerResponse, name: string, data: unknown): void {
  response.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
}

/** Splits text into a few pieces so clients see several deltas, as they would from the service. */
export function chunks(text: string, pieces: number): string[] {
  if (text.length === 0) return [""];
  const size = Math.max(1, Math.ceil(text.length / pieces));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** An API error as both scripts describe one: the status, and `type` as the API spells it. */
interface LoopbackApiError {
  status: number;
  type: string;
  message: string;
}

export interface LoopbackHttpOptions {
  /** Port on 127.0.0.1; 0 (default) picks a free one. */
  port?: number;
  maxBodyBytes: number;
  /** Answers a request whose whole body arrived; `seq` numbers requests from 1. */
  handle(request: IncomingMessage, response: ServerResponse, body: Buffer, seq: number): void;
  /** Sends an error in the API's own body shape and request-id header. */
  sendError(response: ServerResponse, error: LoopbackApiError, requestId: string): void;
  /** The API's error types for a body over `maxBodyBytes` (413) and for a crash of `handle` (500). */
  errorTypes: { tooLarge: string; crash: string };
}

export interface LoopbackHttpServer {
  readonly port: number;
  /** Runs `answer` after `delayMs`, unless the server is closed first. */
  later(delayMs: number, answer: () => void): void;
  /** Stops listening and drops open connections. Safe to call more than once. */
  close(): Promise<void>;
}

/** Listens on 127.0.0.1 (never another interface: the servers hold scripted credentials). */
export async function listenLoopback(options: LoopbackHttpOptions): Promise<LoopbackHttpServer> {
  const pending = new Set<NodeJS.Timeout>();
  let seq = 0;
  const server = createServer((request, response) => {
    const parts: Buffer[] = [];
    let size = 0;
    let refused = false;
    request.on("data", (chunk: Buffer) => {
      if (refused) return;
      size += chunk.length;
      if (size > options.maxBodyBytes) {
        refused = true;
        seq += 1;
        options.sendError(
          response,
          {
            status: 413,
            type: options.errorTypes.tooLarge,
            message: "loopback: request body too large",
          },
          `req_loopback_${seq}`,
        );
        request.resume();
        return;
      }
      parts.push(chunk);
    });
    request.on("end", () => {
      if (refused) return;
      try {
        seq += 1;
        options.handle(request, response, Buffer.concat(parts), seq);
      } catch (error) {
        if (!response.headersSent) {
          options.sendError(
            response,
            { status: 500, type: options.errorTypes.crash, message: `loopback: ${String(error)}` },
            "req_loopback_error",
          );
        } else response.end();
      }
    });
  });
  // Idle keep-alive sockets must not hold the process open after a test.
  server.keepAliveTimeout = 1000;

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  let closing: Promise<void> | undefined;
  return {
    port: (server.address() as AddressInfo).port,
    later(delayMs, answer) {
      const timer = setTimeout(() => {
        pending.delete(timer);
        answer();
      }, delayMs);
      pending.add(timer);
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        for (const timer of pending) clearTimeout(timer);
        pending.clear();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

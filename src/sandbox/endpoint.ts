// One granted endpoint for a sandbox that has no network. Outside, the harness serves HTTP on a
// Unix socket and forwards each request to the real endpoint, putting the credential on it;
// inside, a small forwarder listens on the sandbox's own loopback and passes each connection to
// that socket (bind-mounted in). So the process reaches exactly one API, through a plain
// http://127.0.0.1 URL, and its credential never enters the sandbox: nothing the agent's code
// runs can read it from an environment, a file or /proc.
import { randomBytes } from "node:crypto";
import { chmod, mkdtemp, rm } from "node:fs/promises";
import http from "node:http";
import https from "node:https";
import { join } from "node:path";
import { requestTargetProblem } from "../shared/index.js";

/** Where the endpoint's socket appears inside the sandbox. */
export const SANDBOX_ENDPOINT_SOCKET = "/run/harnesslab/endpoint.sock";
/** The port the forwarder listens on inside (the sandbox's loopback is its own). */
export const SANDBOX_ENDPOINT_PORT = 40_117;
/** A forge task's endpoint (its REST gateway or its MCP server): socket and port inside. */
export const SANDBOX_FORGE_SOCKET = "/run/harnesslab/forge.sock";
export const SANDBOX_FORGE_PORT = 40_118;
/** Where a variant's own MCP servers are reached inside (one socket and port per server, from here). */
export const SANDBOX_SETUP_MCP_SOCKET_DIR = "/run/harnesslab/setup-mcp";
export const SANDBOX_SETUP_MCP_FIRST_PORT = 40_200;

/** A socket of the harness reached from inside the sandbox on 127.0.0.1:`port`. */
export interface GrantedEndpoint {
  /** The socket on the host. */
  socketPath: string;
  /** Where it is bound inside. */
  target: string;
  port: number;
}

/**
 * The command line that runs `argv` with `endpoints` reachable on the sandbox's loopback: the
 * forwarder (run by this Node, which the sandbox shows) listens, then starts the command. Pass
 * the binds along with the command to the sandbox.
 */
export function withGrantedEndpoints(
  argv: readonly string[],
  endpoints: readonly GrantedEndpoint[],
): { argv: string[]; binds: { source: string; target: string }[] } {
  if (endpoints.length === 0) return { argv: [...argv], binds: [] };
  return {
    argv: [
      process.execPath,
      "-e",
      ENDPOINT_FORWARDER_SOURCE,
      endpoints.map((e) => `${e.port}=${e.target}`).join(","),
      ...argv,
    ],
    binds: endpoints.map((e) => ({ source: e.socketPath, target: e.target })),
  };
}

export interface EndpointProxyOptions {
  /** The API's base URL as the host would use it (http or https). */
  upstream: string;
  /** Headers put on every forwarded request (the credential); a client's own values are dropped. */
  headers: Readonly<Record<string, string>>;
  /** Further request headers dropped (credentials the client might send of its own). */
  dropHeaders?: readonly string[];
  /** A harness-owned directory no sandbox sees, for the socket. */
  parentDir: string;
  /**
   * Decides each request before it is forwarded: a reason to refuse it (answered 403 with the
   * reason), or null to forward it. Absent: everything is forwarded.
   */
  allow?: (method: string, path: string) => string | null;
  /** Request bodies larger than this are refused with 413 (default: no limit). */
  maxBodyBytes?: number;
  /**
   * The client's request headers that are forwarded (lower-case names); every other header is
   * dropped. Default: `MODEL_API_HEADERS`.
   */
  forwardHeader?: (name: string) => boolean;
  /** Query parameters removed before forwarding, whatever their case (`sudo`, `token`). */
  dropQueryParams?: readonly string[];
  /**
   * `socket` (default): a fresh Unix socket to bind into a sandbox. `loopback`: 127.0.0.1 on a
   * free port, for a process that runs without a sandbox (--unsafe-no-sandbox).
   */
  listen?: "socket" | "loopback";
  /** The port the client will use inside the sandbox (default SANDBOX_ENDPOINT_PORT). */
  insidePort?: number;
  /**
   * Sees each forwarded request's body as it passes, chunk by chunk (what the host really sent:
   * the evidence that instructions reached the model).
   */
  observeBody?: (chunk: Buffer) => void;
}

/** One request the proxy answered: forwarded (the upstream's status) or refused (403/413). */
interface ProxiedRequest {
  method: string;
  path: string;
  status: number;
  /** Why the proxy refused it; absent when forwarded. */
  refused?: string;
  /** Why the upstream could not be reached for it (`getaddrinfo ENOTFOUND api.example.com`). */
  upstreamError?: string;
}

export interface EndpointProxy {
  /** The socket on the host (bind it into the sandbox); null when listening on loopback. */
  socketPath: string | null;
  /** The base URL the client is given, with the upstream's path kept. */
  clientBaseUrl: string;
  /** Requests forwarded so far. */
  requests(): number;
  /** Every request answered so far, in order. */
  log(): ProxiedRequest[];
  close(): Promise<void>;
}

/** Hop-by-hop headers, never forwarded either way (RFC 9110 §7.6.1), and the client's host. */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "host",
]);

/** Headers any API client sends about its request and what it accepts. */
const CONTENT_HEADERS = new Set([
  "accept",
  "accept-encoding",
  "accept-language",
  "content-type",
  "content-length",
  "content-encoding",
  "user-agent",
  "idempotency-key",
  "traceparent",
  "tracestate",
]);

/**
 * The headers the model APIs' clients send (Anthropic's and OpenAI's SDKs, Claude Code, Codex):
 * their API's own headers and the SDKs' telemetry. Nothing that routes a request (`Host`,
 * `X-Original-URL`, `X-Rewrite-URL`, `X-Forwarded-*`, `Forwarded`) or that a gateway in front of
 * the API might trust passes.
 */
function modelApiHeader(name: string): boolean {
  return (
    CONTENT_HEADERS.has(name) ||
    /^(anthropic-[a-z0-9-]+|x-stainless-[a-z0-9-]+|openai-[a-z0-9-]+|x-client-[a-z0-9-]+|x-app|x-request-id|originator|version|session_id|conversation_id|chatgpt-account-id)$/.test(
      name,
    )
  );
}

/** The headers a Gitea or GitHub API client sends about its request (the gateway adds the token). */
export function forgeApiHeader(name: string): boolean {
  return CONTENT_HEADERS.has(name) || name === "x-github-api-version";
}

/** The query without the named parameters (compared without case). */
function withoutParams(query: string, dropped: ReadonlySet<string>): string {
  if (query === "" || dropped.size === 0) return query;
  const kept = query
    .split("&")
    .filter((pair) => !dropped.has(decodeQueryName(pair.split("=", 1)[0] ?? "").toLowerCase()));
  return kept.join("&");
}

function decodeQueryName(name: string): string {
  try {
    return decodeURIComponent(name.replace(/\+/g, " "));
  } catch {
    return name;
  }
}

/** Starts the outer half: an HTTP server on a fresh Unix socket forwarding to `upstream`. */
export async function startEndpointProxy(options: EndpointProxyOptions): Promise<EndpointProxy> {
  const upstream = new URL(options.upstream);
  if (upstream.protocol !== "http:" && upstream.protocol !== "https:")
    throw new Error(`the endpoint ${options.upstream} is not an http(s) URL`);
  const client = upstream.protocol === "https:" ? https : http;
  const replaced = new Set(Object.keys(options.headers).map((name) => name.toLowerCase()));
  const dropped = new Set([
    ...replaced,
    ...(options.dropHeaders ?? []).map((name) => name.toLowerCase()),
  ]);
  const forwardHeader = options.forwardHeader ?? modelApiHeader;
  const droppedParams = new Set((options.dropQueryParams ?? []).map((name) => name.toLowerCase()));
  const dir =
    options.listen === "loopback" ? null : await mkdtemp(join(options.parentDir, "endpoint-"));
  if (dir !== null) await chmod(dir, 0o700);
  const socketPath = dir === null ? null : join(dir, `${randomBytes(4).toString("hex")}.sock`);
  let requests = 0;
  const log: ProxiedRequest[] = [];
  const server = http.createServer((request, response) => {
    const method = request.method ?? "GET";
    const target = request.url ?? "/";
    const question = target.indexOf("?");
    const path = question === -1 ? target : target.slice(0, question);
    const refuse = (status: number, reason: string) => {
      log.push({ method, path: path.slice(0, 500), status, refused: reason });
      response.writeHead(status, { "content-type": "application/json", connection: "close" });
      response.end(JSON.stringify({ message: reason }));
      request.resume();
    };
    const malformed = requestTargetProblem(target);
    if (malformed !== null) return refuse(400, malformed);
    const refusal = options.allow?.(method, path) ?? null;
    if (refusal !== null) return refuse(403, refusal);
    const max = options.maxBodyBytes;
    if (max !== undefined && Number(request.headers["content-length"] ?? 0) > max)
      return refuse(413, `request body larger than ${max} bytes`);
    requests += 1;
    const entry: ProxiedRequest = { method, path, status: 502 };
    log.push(entry);
    const headers: http.OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(request.headers))
      if (!HOP_BY_HOP.has(name) && !dropped.has(name) && forwardHeader(name) && value !== undefined)
        headers[name] = value;
    Object.assign(headers, options.headers);
    const query = question === -1 ? "" : withoutParams(target.slice(question + 1), droppedParams);
    const forwarded = client.request(
      {
        protocol: upstream.protocol,
        hostname: upstream.hostname,
        port: upstream.port === "" ? undefined : Number(upstream.port),
        method: request.method,
        // The client was given the upstream's path as its own: the request path is the API's,
        // forwarded exactly as it was checked.
        path: query === "" ? path : `${path}?${query}`,
        headers,
        // A connection of its own per request: reusing an idle one races the upstream closing
        // it (a server that keeps idle connections 1 s answered a request sent on one it had
        // just closed with ECONNRESET, on a loaded machine), and a body already streamed
        // upstream cannot be sent again. Model requests are few and long; a handshake each is
        // nothing beside them.
        agent: false,
      },
      (answer) => {
        entry.status = answer.statusCode ?? 502;
        const back: http.OutgoingHttpHeaders = {};
        for (const [name, value] of Object.entries(answer.headers))
          if (!HOP_BY_HOP.has(name) && value !== undefined) back[name] = value;
        response.writeHead(answer.statusCode ?? 502, back);
        answer.pipe(response);
      },
    );
    // A failure to reach the endpoint reaches the client as what it is, a broken connection,
    // so each host classifies it as it would classify a network failure of its own.
    forwarded.on("error", (error) => {
      entry.upstreamError = error.message;
      response.socket?.destroy();
    });
    // A client that went away (its run ended) needs no answer: stop asking the upstream.
    response.on("close", () => {
      if (!response.writableFinished) forwarded.destroy();
    });
    if (max !== undefined) {
      // A chunked body has no length to check first: count it as it passes.
      let size = 0;
      request.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > max) {
          entry.status = 413;
          forwarded.destroy();
          response.socket?.destroy();
        }
      });
    }
    const observe = options.observeBody;
    if (observe !== undefined) request.on("data", (chunk: Buffer) => observe(chunk));
    request.pipe(forwarded);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    if (socketPath === null) server.listen(0, "127.0.0.1", () => resolve());
    else server.listen(socketPath, () => resolve());
  });
  const path = upstream.pathname.replace(/\/+$/, "");
  const port =
    socketPath === null
      ? (server.address() as { port: number }).port
      : (options.insidePort ?? SANDBOX_ENDPOINT_PORT);
  return {
    socketPath,
    clientBaseUrl: `http://127.0.0.1:${port}${path}`,
    requests: () => requests,
    log: () => log.map((e) => ({ ...e })),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (dir !== null) await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The inner half, run by Node inside the sandbox as
 * `node -e <this> <port>=<socket>[,<port>=<socket>…] <command…>`: listens on 127.0.0.1:<port>
 * for each pair, pipes every connection to its socket, then starts the command with the same
 * standard streams, passes it signals, and exits as it exits.
 */
const ENDPOINT_FORWARDER_SOURCE = `
const net = require("node:net");
const { spawn } = require("node:child_process");
const [pairs, program, ...args] = process.argv.slice(1);
const fail = (error) => { process.stderr.write("harnesslab endpoint forwarder: " + error.message + "\\n"); process.exit(125); };
const listening = pairs.split(",").map((pair) => new Promise((resolve) => {
  const at = pair.indexOf("=");
  const port = Number(pair.slice(0, at));
  const socket = pair.slice(at + 1);
  const server = net.createServer((inside) => {
    const outside = net.connect(socket);
    const end = () => { inside.destroy(); outside.destroy(); };
    inside.on("error", end); outside.on("error", end); inside.on("close", end); outside.on("close", end);
    inside.pipe(outside); outside.pipe(inside);
  });
  server.on("error", fail);
  server.listen(port, "127.0.0.1", () => resolve(server));
}));
Promise.all(listening).then((servers) => {
  const child = spawn(program, args, { stdio: "inherit" });
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(signal, () => child.kill(signal));
  child.on("error", (error) => { process.stderr.write("harnesslab: cannot start " + program + ": " + error.message + "\\n"); process.exit(127); });
  child.on("exit", (code, signal) => {
    for (const server of servers) server.close();
    if (signal) { process.removeAllListeners(signal); process.kill(process.pid, signal); }
    process.exit(code === null ? 1 : code);
  });
});
`;

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

/** Where the endpoint's socket appears inside the sandbox. */
export const SANDBOX_ENDPOINT_SOCKET = "/run/harnesslab/endpoint.sock";
/** The port the forwarder listens on inside (the sandbox's loopback is its own). */
export const SANDBOX_ENDPOINT_PORT = 40_117;

export interface EndpointProxyOptions {
  /** The API's base URL as the host would use it (http or https). */
  upstream: string;
  /** Headers put on every forwarded request (the credential); a client's own values are dropped. */
  headers: Readonly<Record<string, string>>;
  /** Further request headers dropped (credentials the client might send of its own). */
  dropHeaders?: readonly string[];
  /** A harness-owned directory no sandbox sees, for the socket. */
  parentDir: string;
}

export interface EndpointProxy {
  /** The socket on the host (bind it to SANDBOX_ENDPOINT_SOCKET). */
  socketPath: string;
  /** The base URL the contained process is given, with the upstream's path kept. */
  clientBaseUrl: string;
  /** Requests forwarded so far. */
  requests(): number;
  close(): Promise<void>;
}

/** Hop-by-hop headers, never forwarded (RFC 9110 §7.6.1), and the client's host. */
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
  const dir = await mkdtemp(join(options.parentDir, "endpoint-"));
  await chmod(dir, 0o700);
  const socketPath = join(dir, `${randomBytes(4).toString("hex")}.sock`);
  let requests = 0;
  const server = http.createServer((request, response) => {
    requests += 1;
    const headers: http.OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(request.headers))
      if (!HOP_BY_HOP.has(name) && !dropped.has(name) && value !== undefined) headers[name] = value;
    Object.assign(headers, options.headers);
    const forwarded = client.request(
      {
        protocol: upstream.protocol,
        hostname: upstream.hostname,
        port: upstream.port === "" ? undefined : Number(upstream.port),
        method: request.method,
        // The client was given the upstream's path as its own: the request path is the API's.
        path: request.url ?? "/",
        headers,
      },
      (answer) => {
        const back: http.OutgoingHttpHeaders = {};
        for (const [name, value] of Object.entries(answer.headers))
          if (!HOP_BY_HOP.has(name) && value !== undefined) back[name] = value;
        response.writeHead(answer.statusCode ?? 502, back);
        answer.pipe(response);
      },
    );
    // A failure to reach the endpoint reaches the client as what it is, a broken connection,
    // so each host classifies it as it would classify a network failure of its own.
    forwarded.on("error", () => response.socket?.destroy());
    request.pipe(forwarded);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, () => resolve());
  });
  const path = upstream.pathname.replace(/\/+$/, "");
  return {
    socketPath,
    clientBaseUrl: `http://127.0.0.1:${SANDBOX_ENDPOINT_PORT}${path}`,
    requests: () => requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The inner half, run by Node inside the sandbox as `node -e <this> <port> <socket> <command…>`:
 * listens on 127.0.0.1:<port>, pipes every connection to the socket, starts the command with the
 * same standard streams, passes it signals, and exits as it exits.
 */
export const ENDPOINT_FORWARDER_SOURCE = `
const net = require("node:net");
const { spawn } = require("node:child_process");
const [port, socket, program, ...args] = process.argv.slice(1);
const server = net.createServer((inside) => {
  const outside = net.connect(socket);
  const end = () => { inside.destroy(); outside.destroy(); };
  inside.on("error", end); outside.on("error", end); inside.on("close", end); outside.on("close", end);
  inside.pipe(outside); outside.pipe(inside);
});
server.on("error", (error) => { process.stderr.write("harnesslab endpoint forwarder: " + error.message + "\\n"); process.exit(125); });
server.listen(Number(port), "127.0.0.1", () => {
  const child = spawn(program, args, { stdio: "inherit" });
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(signal, () => child.kill(signal));
  child.on("error", (error) => { process.stderr.write("harnesslab: cannot start " + program + ": " + error.message + "\\n"); process.exit(127); });
  child.on("exit", (code, signal) => {
    server.close();
    if (signal) { process.removeAllListeners(signal); process.kill(process.pid, signal); }
    process.exit(code === null ? 1 : code);
  });
});
`;

// Where the forge MCP endpoint listens. Contained trials reach it through a Unix socket that only
// their sandbox gets (bind-mounted, forwarded to 127.0.0.1 inside); a trial without a sandbox
// (--unsafe-no-sandbox) reaches it on a loopback port, behind a path no other process can guess.
import { randomBytes } from "node:crypto";
import { chmod, mkdtemp, rm } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { getRequestListener } from "@hono/node-server";
import type { ForgeMcpEndpoint } from "./mcp.js";

/** The path the endpoint answers on when it has a socket of its own. */
export const MCP_PATH = "/mcp";

export interface ServedMcpEndpoint {
  /** The socket (socket mode): bind it into the sandbox. */
  socketPath?: string;
  /** The full URL (loopback mode), secret path included; for socket mode, the path only. */
  url: string;
  close(): Promise<void>;
}

function listener(endpoint: ForgeMcpEndpoint, path: string) {
  return getRequestListener(async (request) => {
    const url = new URL(request.url);
    if (url.pathname !== path)
      return new Response(JSON.stringify({ message: "not found" }), {
        status: 404,
        headers: { "content-type": "application/json" },
      });
    return endpoint.handle(request);
  });
}

async function closeServer(server: http.Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** Serves the endpoint on a fresh socket in a private directory under `parentDir`. */
export async function serveMcpOnSocket(
  endpoint: ForgeMcpEndpoint,
  parentDir: string,
): Promise<ServedMcpEndpoint> {
  const dir = await mkdtemp(join(parentDir, "mcp-"));
  await chmod(dir, 0o700);
  const socketPath = join(dir, "mcp.sock");
  const server = http.createServer(listener(endpoint, MCP_PATH));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, () => resolve());
  });
  return {
    socketPath,
    url: MCP_PATH,
    close: async () => {
      await closeServer(server);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Serves the endpoint on 127.0.0.1 (any free port) under an unguessable path. */
export async function serveMcpOnLoopback(endpoint: ForgeMcpEndpoint): Promise<ServedMcpEndpoint> {
  const path = `${MCP_PATH}/${randomBytes(16).toString("hex")}`;
  const server = http.createServer(listener(endpoint, path));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}${path}`, close: () => closeServer(server) };
}

// A variant's MCP server as a host sees it: an MCP server that lists the sandboxed server's tools
// as they are and passes each call on. The host speaks to the relay (in process, or over a socket
// bound into its sandbox), never to the server's process, which stays in the trial's sandbox.

import { chmod, mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { StdioMcpServer } from "./mcp-stdio.js";

/** `onListed` is called each time the host asks for the tool list (the host's proof it connected). */
export function relayServer(
  name: string,
  server: StdioMcpServer,
  onListed: () => void = () => {},
): McpServer {
  const relay = new McpServer({ name, version: "1.0.0" });
  relay.server.registerCapabilities({ tools: {} });
  relay.server.setRequestHandler(ListToolsRequestSchema, async () => {
    onListed();
    return { tools: server.definitions };
  });
  relay.server.setRequestHandler(CallToolRequestSchema, async (request, extra) =>
    server.callRaw(request.params.name, request.params.arguments ?? {}, extra.signal),
  );
  return relay;
}

export interface ServedRelay {
  /** `socket`: the Unix socket to bind into the host's sandbox; `loopback`: the port on 127.0.0.1. */
  socketPath: string | null;
  port: number | null;
  close(): Promise<void>;
}

/**
 * Serves the relay to a host that starts stdio MCP servers itself: each connection (the host's
 * small stdio-to-socket client) gets a relay of its own. A private socket in a contained run,
 * 127.0.0.1 on a free port under --unsafe-no-sandbox.
 */
export async function serveRelay(
  name: string,
  server: StdioMcpServer,
  onListed: () => void,
  where: { socketParent: string } | "loopback",
): Promise<ServedRelay> {
  const connections = new Set<Socket>();
  let served = false;
  const listener: Server = createServer((socket) => {
    // One connection: the host's client, opened when the host starts its MCP servers. Anything
    // that connects later (a command that can reach the loopback) is not the host.
    if (served) {
      socket.destroy();
      return;
    }
    served = true;
    connections.add(socket);
    socket.on("close", () => connections.delete(socket));
    socket.on("error", () => socket.destroy());
    const relay = relayServer(name, server, onListed);
    void relay.connect(new StdioServerTransport(socket, socket)).catch(() => socket.destroy());
    socket.on("close", () => void relay.close().catch(() => {}));
  });
  let dir: string | null = null;
  let socketPath: string | null = null;
  if (where === "loopback") {
    await new Promise<void>((resolve, reject) => {
      listener.once("error", reject);
      listener.listen(0, "127.0.0.1", () => resolve());
    });
  } else {
    dir = await mkdtemp(join(where.socketParent, "mcp-relay-"));
    await chmod(dir, 0o700);
    socketPath = join(dir, "relay.sock");
    const path = socketPath;
    await new Promise<void>((resolve, reject) => {
      listener.once("error", reject);
      listener.listen(path, () => resolve());
    });
  }
  // An error after listening (a connection's, say) ends that connection, never the harness.
  listener.on("error", () => {});
  const address = listener.address();
  return {
    socketPath,
    port: where === "loopback" && typeof address === "object" && address ? address.port : null,
    close: async () => {
      for (const socket of connections) socket.destroy();
      await new Promise<void>((resolve) => listener.close(() => resolve()));
      if (dir !== null) await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The stdio MCP server a host starts: a few lines of Node that join its standard streams to the
 * relay on `127.0.0.1:<port>` (the socket the sandbox forwards there, or the loopback listener).
 */
export const RELAY_CLIENT_SOURCE = `
const socket = require("node:net").connect(Number(process.argv[1]), "127.0.0.1");
process.stdin.pipe(socket);
socket.pipe(process.stdout);
socket.on("error", (error) => { process.stderr.write("harnesslab MCP relay: " + error.message + "\\n"); process.exit(1); });
socket.on("close", () => process.exit(0));
`;

// What every host does first with a materialized setup: check that each file is the one the
// revision pinned, read a component's principal text, and start its stdio MCP server in the
// trial's sandbox. The hosts differ only in how they hand the result over.
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { type CommandSandbox, commandEnvironment } from "../../sandbox/index.js";
import type { SetupComponent } from "./contract.js";
import { type StdioMcpServer, type StdioMcpStart, startStdioMcpServer } from "./mcp-stdio.js";

/** How long an MCP server may take to start and list its tools (Claude Code's default). */
const MCP_START_TIMEOUT_MS = 30_000;

async function sha256Of(path: string): Promise<string> {
  return `sha256:${createHash("sha256")
    .update(await readFile(path))
    .digest("hex")}`;
}

/** Why a materialized source is not the one the revision pinned; undefined when it is. */
export async function verifySetupFiles(component: SetupComponent): Promise<string | undefined> {
  const source = component.source;
  if (source === undefined) return "it has no source";
  for (const file of source.files) {
    const path = source.type === "file" ? source.path : join(source.path, file.path);
    const actual = await sha256Of(path).catch(
      (error: NodeJS.ErrnoException) => error.code ?? "unreadable",
    );
    if (actual !== file.sha256)
      return `${file.path} is not the file the revision pinned (${actual.startsWith("sha256:") ? "its content differs" : actual})`;
  }
  return undefined;
}

/** The principal Markdown text of a component: SKILL.md, the instructions file, the prompt. */
export async function setupMainText(component: SetupComponent): Promise<string | undefined> {
  const source = component.source;
  if (source === undefined) return undefined;
  const path = source.type === "file" ? source.path : join(source.path, "SKILL.md");
  return readFile(path, "utf8").catch(() => undefined);
}

export interface SandboxedServerOptions {
  sandbox: CommandSandbox;
  /** The trial root: the server's working directory, writable (its `.git` read-only). */
  cwd: string;
  scratchDir: string;
}

/** What a host's executor starts a setup with. */
export interface SetupStartOptions extends SandboxedServerOptions {
  setup: readonly SetupComponent[];
  /** Ends the hooks' and servers' work when the run ends. */
  signal: AbortSignal;
}

/**
 * One MCP server of the variant, in the trial's sandbox: no network, the trial writable, its own
 * source readable (as `HARNESSLAB_SOURCE`), nothing else of the machine's files.
 */
export async function startSandboxedMcpServer(
  component: SetupComponent,
  options: SandboxedServerOptions,
): Promise<StdioMcpStart> {
  const mcp = component.mcp;
  if (mcp === undefined) return { ok: false, reason: "it names no MCP server command" };
  const wrapped = await options.sandbox.wrap([mcp.command, ...mcp.args], {
    cwd: options.cwd,
    writable: [options.cwd],
    readOnly: component.source === undefined ? [] : [component.source.path],
    protect: [join(options.cwd, ".git")],
    env: commandEnvironment({
      ...mcp.env,
      ...(component.source === undefined ? {} : { HARNESSLAB_SOURCE: component.source.path }),
    }),
    timeoutMs: MCP_START_TIMEOUT_MS,
    privateDir: options.scratchDir,
  });
  const started = await startStdioMcpServer({
    argv: wrapped.argv,
    env: wrapped.env,
    cwd: options.cwd,
    startTimeoutMs: MCP_START_TIMEOUT_MS,
  });
  if (!started.ok) {
    await wrapped.dispose();
    return started;
  }
  // What the wrapping made (the unsandboxed kind's private HOME) goes when the server does.
  const server: StdioMcpServer = {
    ...started.server,
    close: async () => {
      await started.server.close();
      await wrapped.dispose();
    },
  };
  return { ok: true, server };
}

/**
 * Calls `found` once for each marker that passes in the stream of chunks, a marker split
 * between two chunks included.
 */
export function watchForMarkers(
  markers: ReadonlyMap<string, string>,
  found: (id: string) => void,
): (chunk: Buffer) => void {
  const pending = new Map(markers);
  const keep = Math.max(...[...markers.values()].map((m) => m.length)) - 1;
  let tail = "";
  return (chunk) => {
    if (pending.size === 0) return;
    const text = tail + chunk.toString("latin1");
    for (const [id, marker] of pending)
      if (text.includes(marker)) {
        pending.delete(id);
        found(id);
      }
    tail = text.slice(-keep);
  };
}

// A variant's stdio MCP server, started contained and spoken to as a host would: the SDK's own
// client over the server's stdin and stdout. The process runs in the trial's sandbox and in a
// process group of its own, so closing it ends everything it started.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { CallToolResult, JSONRPCMessage, Tool } from "@modelcontextprotocol/sdk/types.js";
import { type ProcessGroup, startProcessGroup } from "../../shared/index.js";

/** A tool as the server listed it. */
interface McpToolInfo {
  name: string;
  description?: string;
}

/** An MCP tool call's answer as the scripted host hands it on: its JSON (or text), or its error. */
export type McpCallAnswer = { ok: true; result: unknown } | { ok: false; error: string };

/**
 * The MCP transport over a process's stdin and stdout (newline-delimited JSON-RPC, as MCP's
 * stdio transport is specified). The process is the caller's; closing the transport stops it.
 */
class ProcessStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private readonly buffer = new ReadBuffer();
  private closed = false;

  constructor(private readonly group: ProcessGroup) {}

  async start(): Promise<void> {
    const { child } = this.group;
    child.stdout.on("data", (chunk: Buffer) => {
      this.buffer.append(chunk);
      for (;;) {
        let message: JSONRPCMessage | null;
        try {
          message = this.buffer.readMessage();
        } catch (error) {
          this.onerror?.(error as Error);
          continue;
        }
        if (message === null) break;
        this.onmessage?.(message);
      }
    });
    void this.group.exited.then(() => this.finish());
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) throw new Error("the MCP server has exited");
    const { stdin } = this.group.child;
    await new Promise<void>((resolve, reject) => {
      stdin.write(serializeMessage(message), (error) => (error ? reject(error) : resolve()));
    });
  }

  async close(): Promise<void> {
    await this.group.stop();
    this.finish();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.buffer.clear();
    this.onclose?.();
  }
}

export interface StdioMcpServer {
  tools: McpToolInfo[];
  /** The tools exactly as the server listed them (input schemas included), for a host to list on. */
  definitions: Tool[];
  call(tool: string, input: unknown, signal: AbortSignal): Promise<McpCallAnswer>;
  /** The call's result as the server gave it; a failed call is a result with `isError`. */
  callRaw(tool: string, input: unknown, signal: AbortSignal): Promise<CallToolResult>;
  /** What the server wrote to stderr (its last part). */
  stderr(): string;
  close(): Promise<void>;
}

export type StdioMcpStart = { ok: true; server: StdioMcpServer } | { ok: false; reason: string };

/** How long one tool call may take before it is abandoned (the run's own deadline also applies). */
const DEFAULT_CALL_TIMEOUT_MS = 120_000;

/**
 * Starts the server (`argv` already wrapped by the sandbox), connects, and lists its tools. A
 * server that does not start, exits, or does not answer within `startTimeoutMs` is a failed
 * start, with what it wrote to stderr as the reason.
 */
export async function startStdioMcpServer(options: {
  argv: readonly string[];
  env: Record<string, string>;
  cwd: string;
  startTimeoutMs: number;
  callTimeoutMs?: number;
}): Promise<StdioMcpStart> {
  let group: ProcessGroup;
  try {
    group = startProcessGroup(options.argv, { cwd: options.cwd, env: options.env });
  } catch (error) {
    return { ok: false, reason: `cannot start ${options.argv[0]}: ${(error as Error).message}` };
  }
  const client = new Client({ name: "harnesslab", version: "1.0.0" });
  const why = async (what: string) => {
    const ended = await Promise.race([
      group.exited,
      new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 100).unref()),
    ]);
    const exit =
      ended === undefined
        ? ""
        : ended.error !== undefined
          ? ` (${ended.error})`
          : ` (it exited with ${ended.exitCode ?? ended.signal})`;
    const stderr = group.stderr().trim();
    return `${what}${exit}${stderr === "" ? "" : `; its stderr: ${stderr.slice(-2000)}`}`;
  };
  const startSignal = AbortSignal.timeout(options.startTimeoutMs);
  try {
    await client.connect(new ProcessStdioTransport(group), {
      signal: startSignal,
      timeout: options.startTimeoutMs,
    });
    const tools: McpToolInfo[] = [];
    const definitions: Tool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor }, {
        signal: startSignal,
        timeout: options.startTimeoutMs,
      });
      definitions.push(...page.tools);
      for (const tool of page.tools)
        tools.push({
          name: tool.name,
          ...(tool.description === undefined ? {} : { description: tool.description }),
        });
      cursor = page.nextCursor;
    } while (cursor !== undefined && tools.length < 1_000);
    const callTimeoutMs = options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
    const callRaw = async (tool: string, input: unknown, signal: AbortSignal) => {
      try {
        return (await client.callTool({ name: tool, arguments: toolArguments(input) }, undefined, {
          signal,
          timeout: callTimeoutMs,
        })) as CallToolResult;
      } catch (error) {
        const text = await why((error as Error).message);
        return { isError: true, content: [{ type: "text" as const, text }] };
      }
    };
    return {
      ok: true,
      server: {
        tools,
        definitions,
        call: async (tool, input, signal) => mcpCallAnswer(await callRaw(tool, input, signal)),
        callRaw,
        stderr: () => group.stderr(),
        close: async () => {
          await client.close().catch(() => {});
          await group.stop();
        },
      },
    };
  } catch (error) {
    const reason = await why(
      startSignal.aborted
        ? `the MCP server did not answer initialize and tools/list within ${options.startTimeoutMs} ms`
        : `the MCP server did not start: ${(error as Error).message}`,
    );
    await client.close().catch(() => {});
    await group.stop();
    return { ok: false, reason };
  }
}

function toolArguments(input: unknown): Record<string, unknown> {
  return typeof input === "object" && input !== null && !Array.isArray(input)
    ? (input as Record<string, unknown>)
    : {};
}

/** A tool's answer: its text parts joined, parsed as JSON when they are JSON. */
export function mcpCallAnswer(reply: object): McpCallAnswer {
  const answer = reply as { content?: unknown; isError?: unknown };
  const text = (answer.content as Array<{ type: string; text?: string }> | undefined)
    ?.filter((part) => part.type === "text")
    .map((part) => part.text ?? "")
    .join("\n");
  if (answer.isError === true) return { ok: false, error: text ?? "the tool failed" };
  let result: unknown = text;
  try {
    result = JSON.parse(text ?? "");
  } catch {
    // not JSON: the text itself
  }
  return { ok: true, result };
}

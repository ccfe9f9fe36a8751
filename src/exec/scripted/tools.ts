import { lstat, mkdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { PolicyDecision, PolicyDecisionRecord, ToolPolicy } from "../../policy/index.js";
import {
  type CommandSandbox,
  commandEnvironment,
  type GrantedEndpoint,
  withGrantedEndpoints,
} from "../../sandbox/index.js";
import { npmArgv, readRegularFile, writeRegularFile } from "../../shared/index.js";
import type { TraceEvent } from "../receipt.js";
import { redact } from "../redact.js";
import { type McpCallAnswer, mcpCallAnswer } from "../setup/mcp-stdio.js";
import { commandsReachForge, type ExecutorForgeAccess } from "../types.js";
import type {
  BashOutput,
  GrepMatch,
  ScriptedTools,
  ToolDenied,
  ToolFailed,
  ToolResult,
} from "./contract.js";
import { runSearch } from "./search.js";

const MAX_READ_BYTES = 10 * 1024 * 1024;
const MAX_WRITE_BYTES = 10 * 1024 * 1024;
const MAX_GREP_FILE_BYTES = 1024 * 1024;
const MAX_GREP_MATCHES = 500;
const MAX_GLOB_FILES = 5000;
const MAX_COMMAND_OUTPUT = 64 * 1024;
const MAX_TRACE_STRING = 2000;
const IGNORED_DIRECTORIES = ["**/.git/**", "**/.GIT/**"];
const TRIAL_ENDED = "the trial has ended; tool calls are no longer carried out";

export interface ScriptedToolsOptions {
  policy: ToolPolicy;
  cwd: string;
  scratchDir: string;
  /** Where Bash commands run: they run the trial's (agent-written) code. */
  sandbox: CommandSandbox;
  /** Wall-clock limit of one Glob or Grep call (default 10 s). */
  searchTimeLimitMs?: number;
  /** Aborted when the run ends; in-flight commands are killed and later calls refused. */
  signal: AbortSignal;
  /** Upper bound for one command; the run's own deadline still applies through `signal`. */
  commandTimeoutMs: number;
  trace: TraceEvent[];
  /**
   * A forge task's access: `cli` commands get the forge's endpoint and variables; allowed MCP
   * tools (`mcp__forge__…`) go to the trial's forge MCP server.
   */
  forge?: ExecutorForgeAccess;
  /** The variant's own MCP servers and hooks (its setup), when it has any. */
  setup?: ToolSetup;
}

/** What a variant's setup adds around the tools: its MCP servers, and hooks before and after calls. */
interface ToolSetup {
  /** Carries out a call of one of the setup's MCP tools; undefined when none has that name's prefix. */
  callMcp(
    toolName: string,
    input: unknown,
    signal: AbortSignal,
  ): Promise<McpCallAnswer> | undefined;
  /** Runs before an allowed call; a string blocks the call with that reason. */
  beforeTool(toolName: string, input: unknown): Promise<string | undefined>;
  afterTool(toolName: string, input: unknown, result: unknown): Promise<void>;
}

export interface ScriptedToolbox {
  tools: ScriptedTools;
  /** Number of tool calls attempted while the run was live. */
  calls(): number;
  /** Decision records of the calls the policy denied during this run. */
  denials(): PolicyDecisionRecord[];
  /** Settles once every call that started has finished (killed commands included). */
  settled(): Promise<void>;
  /** Closes what the tools opened (the MCP client); after `settled`. */
  close(): Promise<void>;
  /** Names of the environment variables commands receive (for the receipt). */
  envVarNames: string[];
}

/**
 * The names of the variables a validation command sees: the sandbox's PATH, HOME and TMPDIR and
 * the fixed command environment (no secret, nothing taken from the harness's environment).
 */
export function commandEnvNames(): string[] {
  return [...Object.keys(commandEnvironment()), "PATH", "HOME", "TMPDIR"].sort();
}

function clipStrings(value: unknown): unknown {
  if (typeof value === "string") {
    return value.length > MAX_TRACE_STRING
      ? `${value.slice(0, MAX_TRACE_STRING)}… [${value.length} chars]`
      : value;
  }
  if (Array.isArray(value)) return value.map(clipStrings);
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, clipStrings(v)]));
  }
  return value;
}

function failed(error: string): ToolFailed {
  return { ok: false, denied: false, error };
}

function denied(decision: PolicyDecision): ToolDenied {
  return { ok: false, denied: true, reason: decision.reason, rule: decision.rule };
}

function errorText(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === "ENOENT") return "no such file";
  if (code === "EISDIR") return "is a directory";
  if (code === "ENOTDIR") return "a parent is not a directory";
  return code ?? (error instanceof Error ? error.message : String(error));
}

/** Carries out one allowed call on the physical path the policy checked. */
type Handler = (
  decision: PolicyDecision,
  input: Record<string, unknown>,
) => Promise<ToolResult<object>>;

/** Read, Write, Edit and MultiEdit, bounded in size, on regular files only. */
function fileHandlers(): Record<string, Handler> {
  return {
    Read: async (decision) => {
      const read = await readRegularFile(decision.target!.absolutePath, MAX_READ_BYTES);
      return read.ok ? { ok: true, content: read.value.toString("utf8") } : failed(read.error);
    },
    Write: async (decision, input) => {
      const content = input.content;
      if (typeof content !== "string") return failed("`content` must be a string");
      const path = decision.target!.absolutePath;
      await mkdir(dirname(path), { recursive: true });
      const written = await writeRegularFile(path, content, MAX_WRITE_BYTES);
      return written.ok ? { ok: true, bytes: written.value } : failed(written.error);
    },
    Edit: async (decision, input) => {
      const { old_string: oldText, new_string: newText } = input;
      if (typeof oldText !== "string" || typeof newText !== "string") {
        return failed("`old_string` and `new_string` must be strings");
      }
      if (oldText === "") return failed("`old_string` is empty");
      const path = decision.target!.absolutePath;
      const read = await readRegularFile(path, MAX_READ_BYTES);
      if (!read.ok) return failed(read.error);
      const text = read.value.toString("utf8");
      const occurrences = text.split(oldText).length - 1;
      if (occurrences === 0) return failed("`old_string` not found in the file");
      if (occurrences > 1)
        return failed(`\`old_string\` occurs ${occurrences} times; include more context`);
      const written = await writeRegularFile(
        path,
        text.replace(oldText, () => newText),
        MAX_WRITE_BYTES,
      );
      return written.ok ? { ok: true, replacements: 1 } : failed(written.error);
    },
    MultiEdit: async (decision, input) => {
      const edits = input.edits;
      if (!Array.isArray(edits) || edits.length === 0)
        return failed("`edits` must be a non-empty array");
      const path = decision.target!.absolutePath;
      const read = await readRegularFile(path, MAX_READ_BYTES);
      if (!read.ok) return failed(read.error);
      let text = read.value.toString("utf8");
      for (const [index, edit] of edits.entries()) {
        const oldText = (edit as Record<string, unknown> | null)?.old_string;
        const newText = (edit as Record<string, unknown> | null)?.new_string;
        if (typeof oldText !== "string" || oldText === "" || typeof newText !== "string") {
          return failed(`edits[${index}] needs a non-empty \`old_string\` and a \`new_string\``);
        }
        const occurrences = text.split(oldText).length - 1;
        if (occurrences !== 1)
          return failed(`edits[${index}].old_string occurs ${occurrences} times; expected once`);
        text = text.replace(oldText, () => newText);
      }
      // All or nothing, like the host tool: the file is written only when every edit applies.
      const written = await writeRegularFile(path, text, MAX_WRITE_BYTES);
      return written.ok ? { ok: true, replacements: edits.length } : failed(written.error);
    },
  };
}

/** Glob and Grep, off the harness's thread under a time limit (see search.ts). */
function searchHandlers(searchLimit: {
  signal: AbortSignal;
  timeLimitMs?: number;
}): Record<string, Handler> {
  return {
    Glob: async (decision, input) => {
      const base = decision.target!;
      const found = await runSearch(
        {
          kind: "glob",
          cwd: base.absolutePath,
          pattern: String(input.pattern),
          ignore: IGNORED_DIRECTORIES,
          limit: MAX_GLOB_FILES,
        },
        searchLimit,
      );
      if (!found.ok) return failed(found.error);
      if (!("files" in found)) return failed("the search returned no file list");
      const prefix = base.relativePath === "" ? "" : `${base.relativePath}/`;
      return { ok: true, files: found.files.map((f) => `${prefix}${f}`).sort() };
    },
    Grep: async (decision, input) => {
      const base = decision.target!;
      const info = await lstat(base.absolutePath);
      const found = await runSearch(
        {
          kind: "grep",
          base: base.absolutePath,
          baseIsFile: !info.isDirectory(),
          pattern: String(input.pattern),
          ignore: IGNORED_DIRECTORIES,
          maxFileBytes: MAX_GREP_FILE_BYTES,
          maxMatches: MAX_GREP_MATCHES,
        },
        searchLimit,
      );
      if (!found.ok) return failed(found.error);
      if (!("matches" in found)) return failed("the search returned no matches list");
      const matches: GrepMatch[] = found.matches.map((m) => ({
        path: [base.relativePath, m.path].filter((p) => p !== "").join("/"),
        line: m.line,
        text: m.text,
      }));
      return { ok: true, matches };
    },
  };
}

/** Bash: a command of the trial's vocabulary, in the sandbox, with the trial writable and its `.git` not. */
function bashHandler(
  options: ScriptedToolsOptions,
  env: Record<string, string>,
  grants: GrantedEndpoint[],
  programDir: string | undefined,
): Handler {
  return async (decision) => {
    const argv = decision.argv!;
    const forwarded = withGrantedEndpoints(
      argv[0] === "npm" ? npmArgv(argv.slice(1)) : argv,
      grants,
    );
    const result = await options.sandbox.run(forwarded.argv, {
      cwd: options.cwd,
      writable: [options.cwd],
      ...(forwarded.binds.length > 0 ? { binds: forwarded.binds } : {}),
      ...(programDir === undefined ? {} : { programDirs: [programDir] }),
      // The harness's baseline stays the harness's: commands may read the repository, not change it.
      protect: [join(options.cwd, ".git")],
      env,
      timeoutMs: options.commandTimeoutMs,
      signal: options.signal,
      maxOutputBytes: MAX_COMMAND_OUTPUT,
      privateDir: options.scratchDir,
    });
    if (result.spawnError !== undefined)
      return failed(`could not start ${argv[0]}: ${result.spawnError}`);
    const output: BashOutput = {
      exitCode: result.exitCode,
      stdout: result.stdout,
      stderr: result.stderr,
      timedOut: result.timedOut,
      ...(result.limitsHit.length > 0 ? { limitsHit: result.limitsHit } : {}),
    };
    return { ok: true, ...output };
  };
}

/**
 * Builds the scripted host's tools around the trial's policy. An allowed call operates on the
 * physical path the policy checked (never on the raw input), so what was judged is what is touched.
 */
export function createScriptedTools(options: ScriptedToolsOptions): ScriptedToolbox {
  const { policy, signal, trace } = options;
  const forge = options.forge;
  const env = commandEnvironment(forge?.env ?? {});
  // A cli agent's commands reach the forge's endpoint (in the sandbox, through the forwarder).
  const grants = commandsReachForge(forge) && forge?.endpoint.grant ? [forge.endpoint.grant] : [];
  const mcp = forge?.mcp === undefined ? undefined : lazyMcpClient(forge.mcp);
  const handlers: Record<string, Handler> = {
    ...fileHandlers(),
    ...searchHandlers({
      signal,
      ...(options.searchTimeLimitMs === undefined
        ? {}
        : { timeLimitMs: options.searchTimeLimitMs }),
    }),
    Bash: bashHandler(options, env, grants, forge?.programDir),
  };
  const inFlight = new Set<Promise<unknown>>();
  const denials: PolicyDecisionRecord[] = [];
  let calls = 0;

  /** An allowed call: an MCP tool of the trial's server, or a handler of a built-in tool. */
  async function carryOut(
    decision: PolicyDecision,
    toolName: string,
    input: unknown,
  ): Promise<ToolResult<object>> {
    // The policy allows no unknown tool but the MCP tools of the trial's servers.
    if (decision.tool === null) {
      const setupCall = options.setup?.callMcp(toolName, input, signal);
      if (setupCall !== undefined)
        return toolResultOf(
          await setupCall.catch((error: unknown) => ({
            ok: false as const,
            error: errorText(error),
          })),
        );
      return mcp === undefined
        ? failed(`${toolName} is not a tool of any MCP server of this trial`)
        : await mcp.call(toolName, input).catch((error: unknown) => failed(errorText(error)));
    }
    const handler = handlers[decision.tool]!;
    const fields =
      typeof input === "object" && input !== null ? (input as Record<string, unknown>) : {};
    try {
      return await handler(decision, fields);
    } catch (error) {
      return failed(errorText(error));
    }
  }

  async function perform(toolName: string, input: unknown): Promise<ToolResult<object>> {
    // A rejection, not a result: an agent that retries a refused call in a loop then ends.
    if (signal.aborted) throw new Error(TRIAL_ENDED);
    calls++;
    const decision = await policy.decide(toolName, input);
    const event: TraceEvent = {
      type: "tool_call",
      seq: decision.seq,
      tool: toolName,
      input: clipStrings(redact(input)),
      decision: decision.decision,
      rule: decision.rule,
    };
    trace.push(event);
    let result: ToolResult<object>;
    if (decision.decision === "deny") {
      const record = policy.decisions().find((r) => r.seq === decision.seq);
      if (record) denials.push(record);
      result = denied(decision);
    } else if (signal.aborted) result = failed(TRIAL_ENDED);
    else {
      const blocked = await options.setup?.beforeTool(toolName, input);
      if (blocked !== undefined) result = failed(blocked);
      else {
        result = await carryOut(decision, toolName, input);
        if (!signal.aborted) await options.setup?.afterTool(toolName, input, result);
      }
    }
    event.result = clipStrings(redact(summarizeResult(result)));
    return result;
  }

  function track<T>(promise: Promise<T>): Promise<T> {
    inFlight.add(promise);
    promise.finally(() => inFlight.delete(promise)).catch(() => {});
    return promise;
  }

  const call = (toolName: string, input: unknown) => track(perform(toolName, input));

  return {
    tools: scriptedToolsOver(call),
    calls: () => calls,
    denials: () => [...denials],
    settled: async () => {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
    close: async () => {
      await mcp?.close();
    },
    envVarNames: commandEnvNames(),
  };
}

/** The agent-facing tools: each method a call of the Claude Code–named tool with its input shape. */
function scriptedToolsOver(
  call: (toolName: string, input: unknown) => Promise<ToolResult<object>>,
): ScriptedTools {
  return {
    read: (path) => call("Read", { file_path: path }) as Promise<ToolResult<{ content: string }>>,
    write: (path, content) =>
      call("Write", { file_path: path, content }) as Promise<ToolResult<{ bytes: number }>>,
    edit: (path, oldText, newText) =>
      call("Edit", { file_path: path, old_string: oldText, new_string: newText }) as Promise<
        ToolResult<{ replacements: 1 }>
      >,
    glob: (pattern, path) =>
      call("Glob", path === undefined ? { pattern } : { pattern, path }) as Promise<
        ToolResult<{ files: string[] }>
      >,
    grep: (pattern, path) =>
      call("Grep", path === undefined ? { pattern } : { pattern, path }) as Promise<
        ToolResult<{ matches: GrepMatch[] }>
      >,
    bash: (command) => call("Bash", { command }) as Promise<ToolResult<BashOutput>>,
    call: (toolName, input) =>
      call(toolName, input) as Promise<ToolResult<Record<string, unknown>>>,
  };
}

/**
 * A client of the trial's forge MCP server, connected on first use over the server's own HTTP
 * handler (in-process: the scripted agent runs in the harness), speaking MCP as a host would.
 */
function lazyMcpClient(server: NonNullable<ExecutorForgeAccess["mcp"]>) {
  let connecting: Promise<Client> | undefined;
  const prefix = `mcp__${server.server}__`;
  const connect = () => {
    connecting ??= (async () => {
      const client = new Client({ name: "harnesslab-scripted", version: "1.0.0" });
      const transport = new StreamableHTTPClientTransport(new URL("http://forge.mcp/mcp"), {
        fetch: (url, init) => server.handle(new Request(url, init)),
      });
      await client.connect(transport);
      return client;
    })();
    return connecting;
  };
  return {
    async call(toolName: string, input: unknown): Promise<ToolResult<{ result: unknown }>> {
      if (!toolName.startsWith(prefix))
        return failed(`${toolName} is not a tool of this trial's MCP server`);
      const client = await connect();
      const answer = await client.callTool({
        name: toolName.slice(prefix.length),
        arguments: (typeof input === "object" && input !== null ? input : {}) as Record<
          string,
          unknown
        >,
      });
      return toolResultOf(mcpCallAnswer(answer));
    },
    async close() {
      if (connecting === undefined) return;
      await (await connecting.catch(() => undefined))?.close().catch(() => {});
    },
  };
}

/** An MCP tool's answer as a tool result: `{ok: true, result}` or a failure with its text. */
function toolResultOf(answer: McpCallAnswer): ToolResult<{ result: unknown }> {
  return answer.ok ? { ok: true, result: answer.result } : failed(answer.error);
}

/** What the trace keeps of a result: outcomes and sizes, not whole file contents. */
function summarizeResult(result: ToolResult<object>): Record<string, unknown> {
  if (!result.ok) return { ...result };
  const out: Record<string, unknown> = { ok: true };
  for (const [key, value] of Object.entries(result as Record<string, unknown>)) {
    if (key === "ok") continue;
    if (key === "content" && typeof value === "string") out.contentChars = value.length;
    else if (key === "files" && Array.isArray(value)) out.files = value.length;
    else if (key === "matches" && Array.isArray(value)) out.matches = value.length;
    // An MCP tool's answer, as text (clipped with every other string of the trace).
    else if (key === "result" && typeof value === "object") out.result = JSON.stringify(value);
    else out[key] = value;
  }
  return out;
}

// The scripted host's side of a variant's setup: it hands the agent every materialized
// component in `ctx.setup`, starts the variant's MCP servers in the trial's sandbox (their tools
// callable through `ctx.tools.call`), runs its hooks at their events, and reports what it loaded.
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { type CommandSandbox, commandEnvironment } from "../../sandbox/index.js";
import { type HostSetupReport, mcpToolName, type SetupComponent } from "../setup/contract.js";
import { createHookRunner, type HookOutcome, type HookRunner } from "../setup/hooks.js";
import {
  type McpCallAnswer,
  type StdioMcpServer,
  startStdioMcpServer,
} from "../setup/mcp-stdio.js";
import type { ScriptedSetup, ScriptedSetupComponent } from "./contract.js";

/** How long an MCP server may take to start and list its tools (Claude Code's default). */
const MCP_START_TIMEOUT_MS = 30_000;

export interface ScriptedSetupRun {
  /** What the agent gets as `ctx.setup`. */
  setup: ScriptedSetup;
  /** Calls a tool of one of the variant's MCP servers; undefined when no server has that prefix. */
  callMcp(
    toolName: string,
    input: unknown,
    signal: AbortSignal,
  ): Promise<McpCallAnswer> | undefined;
  hooks: HookRunner;
  /** The components whose load failed, and whose requirement says the trial must then fail. */
  fatal(): HostSetupReport[];
  reports(): HostSetupReport[];
  close(): Promise<void>;
}

async function sha256Of(path: string): Promise<string> {
  return `sha256:${createHash("sha256")
    .update(await readFile(path))
    .digest("hex")}`;
}

/** Whether each file of a materialized source is there with the content the IR pinned. */
async function verifyFiles(component: SetupComponent): Promise<string | undefined> {
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
async function mainText(component: SetupComponent): Promise<string | undefined> {
  const source = component.source;
  if (source === undefined) return undefined;
  const path = source.type === "file" ? source.path : join(source.path, "SKILL.md");
  return readFile(path, "utf8").catch(() => undefined);
}

export interface ScriptedSetupOptions {
  setup: readonly SetupComponent[];
  sandbox: CommandSandbox;
  cwd: string;
  scratchDir: string;
  sessionId: string;
  /** Ends the hooks' and servers' work when the run is aborted from outside. */
  signal: AbortSignal;
}

/** Starts the setup; never throws for a component that fails to load (its report says why). */
export async function startScriptedSetup(options: ScriptedSetupOptions): Promise<ScriptedSetupRun> {
  const reports = new Map<string, HostSetupReport>();
  const servers = new Map<string, StdioMcpServer>();
  const components: ScriptedSetupComponent[] = [];
  const report = (component: SetupComponent, fields: Partial<HostSetupReport>) =>
    reports.set(component.id, {
      component: component.id,
      mechanism: component.mechanism,
      status: "loaded",
      ...fields,
    });
  for (const component of options.setup) {
    const entry: ScriptedSetupComponent = {
      id: component.id,
      kind: component.kind,
      mechanism: component.mechanism,
      ...(component.description === undefined ? {} : { description: component.description }),
      files: component.source?.files.map((f) => f.path) ?? [],
      ...(component.source === undefined ? {} : { path: component.source.path }),
    };
    if (component.source !== undefined) {
      const problem = await verifyFiles(component);
      if (problem !== undefined) {
        report(component, { status: "failed", reason: problem });
        continue;
      }
      const text = await mainText(component);
      if (text !== undefined) entry.text = text;
    }
    switch (component.mechanism) {
      case "native-skill":
        if (component.source?.skill !== undefined) entry.skill = { ...component.source.skill };
        report(component, component.source?.skill ? { hostName: component.source.skill.name } : {});
        break;
      case "subagent":
        entry.subagent = {
          name: component.id,
          ...(component.description === undefined ? {} : { description: component.description }),
          prompt: entry.text ?? "",
          tools: [...(component.tools ?? [])],
        };
        report(component, {});
        break;
      case "mcp-server": {
        const started = await startServer(component, options);
        if (!started.ok) {
          report(component, { status: "failed", reason: started.reason });
          continue;
        }
        servers.set(component.id, started.server);
        const tools = started.server.tools.map((tool) => ({
          name: mcpToolName(component.id, tool.name),
          ...(tool.description === undefined ? {} : { description: tool.description }),
        }));
        entry.mcp = { tools };
        report(component, { tools: tools.map((t) => t.name) });
        break;
      }
      case "native-hook":
        entry.hook = { event: component.hook!.event, command: [...component.hook!.command] };
        report(component, {});
        break;
      case "system-instruction":
        report(component, {});
        break;
    }
    components.push(entry);
  }
  const hooks = createHookRunner({
    hooks: options.setup.filter(
      (c) => c.mechanism === "native-hook" && reports.get(c.id)?.status === "loaded",
    ),
    sandbox: options.sandbox,
    cwd: options.cwd,
    scratchDir: options.scratchDir,
    sessionId: options.sessionId,
    signal: options.signal,
  });
  return {
    setup: { components, context: [] },
    callMcp(toolName, input, signal) {
      for (const [id, server] of servers) {
        const prefix = mcpToolName(id, "");
        if (toolName.startsWith(prefix))
          return server.call(toolName.slice(prefix.length), input, signal);
      }
      return undefined;
    },
    hooks,
    fatal: () =>
      options.setup
        .filter((c) => c.onDegrade === "fail" && reports.get(c.id)?.status !== "loaded")
        .map((c) => reports.get(c.id)!),
    reports: () =>
      options.setup.map((component) => {
        const base = reports.get(component.id) ?? {
          component: component.id,
          mechanism: component.mechanism,
          status: "unconfirmed" as const,
        };
        if (component.mechanism !== "native-hook") return base;
        const { runs, count } = hooks.runsOf(component.id);
        return { ...base, hookRuns: runs, hookRunCount: count };
      }),
    close: async () => {
      await Promise.all([...servers.values()].map((server) => server.close()));
    },
  };
}

/** One MCP server of the variant, in the trial's sandbox: the trial writable, its source readable. */
async function startServer(component: SetupComponent, options: ScriptedSetupOptions) {
  const mcp = component.mcp!;
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
  return { ok: true as const, server };
}

/** The hook payload of a tool event, as Claude Code gives it. */
export function toolHookPayload(
  toolName: string,
  input: unknown,
  response?: unknown,
): Record<string, unknown> {
  return {
    tool_name: toolName,
    tool_input: input,
    ...(response === undefined ? {} : { tool_response: response }),
  };
}

/** The first blocking outcome's feedback (its stderr, as Claude Code hands it to the model). */
export function blockedBy(outcomes: readonly HookOutcome[]): string | undefined {
  const blocking = outcomes.find((o) => o.run.blocked);
  if (blocking === undefined) return undefined;
  const why = blocking.run.stderr.trim() || blocking.run.stdout.trim() || "no reason given";
  return `the ${blocking.run.event} hook ${blocking.component} blocked it: ${why}`;
}

// The scripted host's side of a variant's setup: it hands the agent every materialized
// component in `ctx.setup`, starts the variant's MCP servers in the trial's sandbox (their tools
// callable through `ctx.tools.call`), runs its hooks at their events, and reports what it loaded.
import { type HostSetupReport, mcpToolName, type SetupComponent } from "../setup/contract.js";
import { createHookRunner, type HookRunner } from "../setup/hooks.js";
import type { McpCallAnswer, StdioMcpServer } from "../setup/mcp-stdio.js";
import {
  type SetupStartOptions,
  setupMainText,
  startSandboxedMcpServer,
  verifySetupFiles,
} from "../setup/start.js";
import type { ScriptedSetup, ScriptedSetupComponent } from "./contract.js";

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

export interface ScriptedSetupOptions extends SetupStartOptions {
  sessionId: string;
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
      const problem = await verifySetupFiles(component);
      if (problem !== undefined) {
        report(component, { status: "failed", reason: problem });
        continue;
      }
      const text = await setupMainText(component);
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
        const started = await startSandboxedMcpServer(component, options);
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

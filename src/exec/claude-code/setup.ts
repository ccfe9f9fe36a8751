// A variant's setup on Claude Code, through the Agent SDK's own options and nothing of the user's
// settings: skills through one local plugin whose skills/ links to the materialized folders, MCP servers
// started by harnesslab in the trial's sandbox and relayed to Claude Code as in-process SDK
// servers, subagents as `agents`, hooks as SDK hook callbacks that run the hook's command in the
// trial's sandbox, instructions appended to the system prompt. What loaded is what Claude Code's
// init message lists (skills, agents, MCP servers `connected`), what its hooks were called for,
// and, for instructions, what the endpoint proxy saw in the model requests.
import { mkdir, symlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import type {
  AgentDefinition,
  HookCallbackMatcher,
  HookJSONOutput,
  McpSdkServerConfigWithInstance,
  SDKSystemMessage,
  HookEvent as SdkHookEvent,
} from "@anthropic-ai/claude-agent-sdk";
import type { HookEvent } from "../../ir/index.js";
import { SETUP_SKILL_NAMESPACE } from "../../policy/index.js";
import { type HostSetupReport, mcpToolName, type SetupComponent } from "../setup/contract.js";
import { blockedBy, createHookRunner, type HookRunner } from "../setup/hooks.js";
import type { StdioMcpServer } from "../setup/mcp-stdio.js";
import { relayServer } from "../setup/relay.js";
import {
  fatalUnloaded,
  markedInstructions,
  type SetupStartOptions,
  setupMainText,
  setupReportBook,
  skillToHand,
  sourceVerified,
  startSandboxedMcpServer,
  watchForMarkers,
} from "../setup/start.js";

/** The events whose hook can refuse what is about to happen (exit status 2), as Claude Code reads it. */
const BLOCKING_EVENTS = new Set<HookEvent>(["PreToolUse", "UserPromptSubmit", "Stop"]);
/** The events whose hook's standard output Claude Code adds to the model's context. */
const CONTEXT_EVENTS = new Set<HookEvent>(["SessionStart", "UserPromptSubmit"]);

/** The query() options a setup adds. */
export interface ClaudeSetupOptions {
  plugins: { type: "local"; path: string }[];
  skills: string[];
  mcpServers: Record<string, McpSdkServerConfigWithInstance>;
  agents: Record<string, AgentDefinition>;
  hooks: Partial<Record<SdkHookEvent, HookCallbackMatcher[]>>;
  /** Appended to Claude Code's own system prompt (the instructions, each under its marker). */
  systemPromptAppend: string | undefined;
  /** The host tools the setup needs visible: `Skill` for skills, `Agent` for subagents. */
  tools: string[];
}

export interface ClaudeSetupRun {
  options: ClaudeSetupOptions;
  /** Folders the contained host must read (the plugin's root, the materialized setup). */
  readOnlyPaths: string[];
  /**
   * For the endpoint proxy: reads the model requests' bodies as they pass, and marks an
   * instructions component loaded when its marker went to the model. Absent without instructions.
   */
  observeRequestBody: ((chunk: Buffer) => void) | undefined;
  /** What the init message says of each component; returns the ones that must end the trial. */
  confirm(init: SDKSystemMessage): HostSetupReport[];
  /** The components that failed before Claude Code started and whose requirement says `fail`. */
  fatalBeforeStart(): HostSetupReport[];
  reports(): HostSetupReport[];
  /** Once the run is over: the components whose requirement says `fail` and that never loaded. */
  fatalAfterRun(): HostSetupReport[];
  close(): Promise<void>;
}

/**
 * Prepares the setup for one run: checks every file, writes the plugin manifest, starts the MCP
 * servers. Never throws for a component that fails to load; its report says why.
 */
export async function prepareClaudeSetup(input: SetupStartOptions): Promise<ClaudeSetupRun> {
  const book = setupReportBook(input.setup);
  const { report, update } = book;
  const servers = new Map<string, StdioMcpServer>();
  const options: ClaudeSetupOptions = {
    plugins: [],
    skills: [],
    mcpServers: {},
    agents: {},
    hooks: {},
    systemPromptAppend: undefined,
    tools: [],
  };
  const skillDirs: { name: string; path: string }[] = [];
  const skillNames = new Map<string, string>();
  const instructions: string[] = [];
  const instructionMarkers = new Map<string, string>();
  const hookComponents: SetupComponent[] = [];
  const readOnlyPaths = new Set<string>();

  // Whatever was started before a step failed (a server, say) stops before the error goes on.
  try {
    for (const component of input.setup) {
      if (!(await sourceVerified(component, book))) continue;
      switch (component.mechanism) {
        case "native-skill": {
          const skill = skillToHand(component, new Set(skillNames.values()));
          if (!skill.ok) {
            report(component, { status: "failed", reason: skill.reason });
            break;
          }
          const { name } = skill;
          skillDirs.push({ name, path: skill.path });
          skillNames.set(component.id, name);
          // Qualified: a bare name could also enable a skill of Claude Code's own.
          options.skills.push(`${SETUP_SKILL_NAMESPACE}:${name}`);
          readOnlyPaths.add(skill.path);
          report(component, {});
          break;
        }
        case "system-instruction": {
          const marked = await markedInstructions(component, book);
          if (marked === undefined) break;
          instructionMarkers.set(component.id, marked.marker);
          instructions.push(marked.text);
          report(component, {});
          break;
        }
        case "subagent": {
          const prompt = await setupMainText(component);
          if (component.source !== undefined && prompt === undefined) {
            report(component, { status: "failed", reason: "its prompt file cannot be read" });
            break;
          }
          options.agents[component.id] = {
            description: component.description ?? component.id,
            prompt: prompt ?? "",
            ...(component.tools !== undefined && component.tools.length > 0
              ? { tools: [...component.tools] }
              : {}),
          };
          report(component, {});
          break;
        }
        case "mcp-server": {
          const started = await startSandboxedMcpServer(component, input);
          if (!started.ok) {
            report(component, { status: "failed", reason: started.reason });
            break;
          }
          servers.set(component.id, started.server);
          options.mcpServers[component.id] = {
            type: "sdk",
            name: component.id,
            instance: relayServer(component.id, started.server),
          };
          report(component, {});
          break;
        }
        case "native-hook":
          hookComponents.push(component);
          report(component, {});
          break;
      }
    }

    if (skillDirs.length > 0) {
      const root = await writePlugin(skillDirs);
      options.plugins.push({ type: "local", path: root });
      readOnlyPaths.add(root);
      options.tools.push("Skill");
    }
  } catch (error) {
    await Promise.all([...servers.values()].map((server) => server.close()));
    throw error;
  }

  if (Object.keys(options.agents).length > 0) options.tools.push("Agent");
  if (instructions.length > 0) options.systemPromptAppend = instructions.join("\n\n");
  // Hook commands and MCP servers run in sandboxes of their own (outside Claude Code's); only
  // the skills' folders must be visible to Claude Code itself.
  const hooks = createHookRunner({
    hooks: hookComponents,
    sandbox: input.sandbox,
    cwd: input.cwd,
    scratchDir: input.scratchDir,
    sessionId: "",
    signal: input.signal,
  });
  // Hook commands still running when the run ends are waited for: none may touch the trial
  // while it is captured.
  const running = new Set<Promise<unknown>>();
  const tracked: HookRunner = {
    ...hooks,
    run: (event, payload) => {
      const run = hooks.run(event, payload);
      running.add(run);
      void run.finally(() => running.delete(run)).catch(() => {});
      return run;
    },
  };
  for (const event of new Set(hookComponents.map((c) => c.hook!.event))) {
    options.hooks[event] = [{ hooks: [hookCallback(event, tracked)] }];
  }

  const run: ClaudeSetupRun = {
    options,
    readOnlyPaths: [...readOnlyPaths],
    confirm(init) {
      const listedSkills = new Set(init.skills ?? []);
      const listedAgents = new Set(init.agents ?? []);
      const servers = new Map((init.mcp_servers ?? []).map((s) => [s.name, s.status]));
      const pluginProblems = pluginErrorsOf(init);
      for (const component of input.setup) {
        if (book.get(component.id)?.status === "failed") continue;
        switch (component.mechanism) {
          case "native-skill": {
            const qualified = `${SETUP_SKILL_NAMESPACE}:${skillNames.get(component.id)}`;
            const listed = listedSkills.has(qualified) ? qualified : undefined;
            update(
              component.id,
              listed !== undefined
                ? { status: "loaded", hostName: listed }
                : {
                    status: "failed",
                    reason: `Claude Code's init message does not list the skill${pluginProblems}`,
                  },
            );
            break;
          }
          case "subagent":
            update(
              component.id,
              listedAgents.has(component.id)
                ? { status: "loaded" }
                : {
                    status: "failed",
                    reason: "Claude Code's init message does not list the agent",
                  },
            );
            break;
          case "mcp-server": {
            const status = servers.get(component.id);
            const prefix = mcpToolName(component.id, "");
            update(
              component.id,
              status === "connected"
                ? {
                    status: "loaded",
                    tools: (init.tools ?? []).filter((tool) => tool.startsWith(prefix)),
                  }
                : {
                    status: "failed",
                    reason:
                      status === undefined
                        ? "Claude Code's init message does not list the MCP server"
                        : `Claude Code reports the MCP server ${status}`,
                  },
            );
            break;
          }
          default:
            break;
        }
      }
      return book.fatal();
    },
    observeRequestBody:
      instructionMarkers.size === 0
        ? undefined
        : watchForMarkers(instructionMarkers, (id) => update(id, { status: "loaded" })),
    fatalBeforeStart: () => book.fatal(),
    reports: () => reportsNow(),
    fatalAfterRun: () => fatalUnloaded(input.setup, reportsNow()),
    close: async () => {
      await Promise.allSettled([...running]);
      await Promise.all([...servers.values()].map((server) => server.close()));
    },
  };

  return run;

  function reportsNow(): HostSetupReport[] {
    return input.setup.map((component) => {
      const base = book.all().find((r) => r.component === component.id)!;
      if (component.mechanism === "system-instruction" && base.status === "unconfirmed")
        return {
          ...base,
          reason: "no model request that the endpoint proxy forwarded carried its text",
        };
      if (component.mechanism !== "native-hook" || base.status === "failed") return base;
      const { runs, count } = hooks.runsOf(component.id);
      // The host calling the hook is its report that the hook is installed.
      return count > 0
        ? { ...base, status: "loaded" as const, hookRuns: runs, hookRunCount: count }
        : {
            ...base,
            reason: `Claude Code never reached ${component.hook!.event} in this run`,
            hookRuns: runs,
            hookRunCount: count,
          };
    });
  }
}

/**
 * The plugin: a harness-owned folder beside the materialized components holding only its manifest
 * and `skills/<name>`, each a link to a skill's read-only folder. (Not the setup folder itself:
 * Claude Code also discovers agents/, commands/, hooks/ and .mcp.json in a plugin's root.)
 */
async function writePlugin(skills: readonly { name: string; path: string }[]): Promise<string> {
  const root = join(dirname(skills[0]!.path), ".harnesslab-claude-plugin");
  await mkdir(join(root, ".claude-plugin"), { recursive: true });
  await mkdir(join(root, "skills"));
  const manifest = {
    name: SETUP_SKILL_NAMESPACE,
    version: "1.0.0",
    description: "The skills of the variant's setup, materialized by harnesslab",
  };
  await writeFile(
    join(root, ".claude-plugin", "plugin.json"),
    `${JSON.stringify(manifest, null, 2)}\n`,
    {
      mode: 0o444,
    },
  );
  for (const skill of skills) await symlink(skill.path, join(root, "skills", skill.name));
  return root;
}

function pluginErrorsOf(init: SDKSystemMessage): string {
  const errors = (init as { plugin_errors?: unknown }).plugin_errors;
  if (!Array.isArray(errors) || errors.length === 0) return "";
  return ` (plugin errors: ${JSON.stringify(errors).slice(0, 1000)})`;
}

/** The SDK's hook input as the hook's stdin: its own fields, less what only Claude Code can read. */
function hookPayload(input: Record<string, unknown>): Record<string, unknown> {
  const { transcript_path: _transcript, ...rest } = input;
  return rest;
}

/** One callback per event: runs the event's hooks, answers as Claude Code reads a hook's exit. */
function hookCallback(event: HookEvent, runner: HookRunner) {
  return async (hookInput: unknown): Promise<HookJSONOutput> => {
    const outcomes = await runner.run(event, hookPayload(hookInput as Record<string, unknown>));
    const blocked = BLOCKING_EVENTS.has(event) ? blockedBy(outcomes) : undefined;
    if (blocked !== undefined) {
      if (event === "PreToolUse")
        return {
          hookSpecificOutput: {
            hookEventName: "PreToolUse",
            permissionDecision: "deny",
            permissionDecisionReason: blocked,
          },
        };
      return { decision: "block", reason: blocked };
    }
    if (CONTEXT_EVENTS.has(event)) {
      const context = outcomes
        .filter((o) => o.run.exitCode === 0 && o.run.stdout.trim() !== "")
        .map((o) => o.run.stdout.trim())
        .join("\n");
      if (context !== "")
        return {
          hookSpecificOutput: {
            hookEventName: event as "SessionStart" | "UserPromptSubmit",
            additionalContext: context,
          },
        };
    }
    return {};
  };
}

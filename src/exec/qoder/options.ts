// The query() options for one trial, per runtime profile. Pure: callbacks, paths and the
// environment are passed in, so tests can compare the whole options object.
import { delimiter, join } from "node:path";
import type { HookCallbackMatcher, Options } from "@qoder-ai/qoder-agent-sdk";
import { QUIET_NPM_ENV } from "../sdk/common.js";
import type { ExecutorRunInput } from "../types.js";
import { QODER_PROFILES, type QoderProfile, type QoderSdkAuthObject } from "./contract.js";
import type { QoderPermissionGate } from "./permissions.js";

/** Tools of the minimal profile, whatever the manifest lists (all four are required by it). */
const MINIMAL_TOOLS = ["Read", "Write", "Edit", "Bash"] as const;

/**
 * The minimal profile's whole system prompt, in place of the CLI's own: short, tool-centred, and
 * honest about the permission policy so a denial is not retried in another spelling.
 */
export const MINIMAL_SYSTEM_PROMPT = [
  "You are a coding agent working in the repository that is your current working directory.",
  "Your tools are Read, Write, Edit and Bash. Read before you edit, keep changes to what the task asks, and run the project's checks when the task says how.",
  "Every tool call is checked by a permission policy. A denied call stays denied: do not retry it in another form; continue within what is allowed.",
  "When you are done, reply with a short summary of what you changed and how you checked it.",
].join("\n");

/** Permission modes that would let calls run without the harness's callback; refused. */
export const CALLBACK_BYPASSING_MODES = ["bypassPermissions", "yolo"] as const;

/** Permission modes the SDK knows. */
export const QODER_PERMISSION_MODES = [
  "default",
  "acceptEdits",
  "plan",
  "dontAsk",
  "auto",
  ...CALLBACK_BYPASSING_MODES,
] as const;

export function isQoderProfile(value: string): value is QoderProfile {
  return (QODER_PROFILES as readonly string[]).includes(value);
}

/** Variables the CLI may inherit from the credential source besides the base allowlist. */
export const QODER_HOST_VARIABLES = ["NODE_EXTRA_CA_CERTS"] as const;

/**
 * The run's own variables: an isolated home and config directory inside the scratch area, and
 * switches that keep the CLI and the tools it runs (npm) from phoning home. Qodercli documents
 * no telemetry switch of its own; with no model endpoint but Qoder's, it must reach Qoder anyway.
 */
export function qoderEnvOverrides(
  home: string,
  configDir: string,
  tmpDir: string,
): Record<string, string> {
  return {
    HOME: home,
    USERPROFILE: home,
    QODER_CONFIG_DIR: configDir,
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_CACHE_HOME: join(home, ".cache"),
    XDG_DATA_HOME: join(home, ".local", "share"),
    XDG_STATE_HOME: join(home, ".local", "state"),
    TMPDIR: tmpDir,
    OTEL_SDK_DISABLED: "true",
    DO_NOT_TRACK: "1",
    ...QUIET_NPM_ENV,
  };
}

export interface QoderQueryInput {
  input: ExecutorRunInput;
  profile: QoderProfile;
  env: Record<string, string>;
  auth: QoderSdkAuthObject;
  transport: unknown;
  pathToQoderCLIExecutable: string;
  abortController: AbortController;
  gate: QoderPermissionGate;
  stderr: (data: string) => void;
  proxy?: string;
}

/** The tools the agent is given under a profile. */
export function profileTools(profile: QoderProfile, requested: readonly string[]): string[] {
  return profile === "qoder-minimal-v1" ? [...MINIMAL_TOOLS] : [...requested];
}

/**
 * The options of one trial's query(). Both profiles run ephemeral sessions with no setting
 * sources, no MCP servers (strict), the harness's permission callback and PreToolUse hook, and
 * the process transport. The minimal profile also replaces the CLI's system prompt with a short
 * one of its own and turns skills and plugins off.
 */
export function buildQueryOptions(q: QoderQueryInput): Options {
  const { runtime } = q.input;
  const hooks: HookCallbackMatcher[] = [{ hooks: [q.gate.preToolUse] }];
  const options: Options = {
    cwd: q.input.cwd,
    env: {
      ...q.env,
      ...q.input.forge?.env,
      // A forge task's program, run by its name (Qoder runs unsandboxed: its PATH is the commands').
      ...(q.input.forge?.programDir === undefined
        ? {}
        : {
            PATH: [q.input.forge.programDir, q.env.PATH ?? ""].join(delimiter),
          }),
    },
    auth: q.auth as Options["auth"],
    transport: q.transport as Options["transport"],
    pathToQoderCLIExecutable: q.pathToQoderCLIExecutable,
    abortController: q.abortController,
    tools: profileTools(q.profile, runtime.tools),
    allowedTools: [...runtime.allowedTools],
    disallowedTools: [...runtime.disallowedTools],
    permissionMode: (runtime.permissionMode ?? "default") as Options["permissionMode"],
    canUseTool: q.gate.canUseTool,
    hooks: { PreToolUse: hooks },
    settingSources: [],
    // Only the harness's forge MCP server, in a forge task whose variant reaches it by MCP (Qoder
    // runs without the sandbox only, so the server is on a loopback port behind a secret path).
    mcpServers: q.input.forge?.mcp
      ? { [q.input.forge.mcp.server]: { type: "http", url: q.input.forge.endpoint.url } }
      : {},
    strictMcpConfig: true,
    persistSession: false,
    stderr: q.stderr,
    ...(runtime.model === undefined ? {} : { model: runtime.model }),
    ...(runtime.maxTurns === undefined ? {} : { maxTurns: runtime.maxTurns }),
    ...(q.proxy === undefined ? {} : { proxy: q.proxy }),
  };
  if (q.profile === "qoder-minimal-v1") {
    return { ...options, systemPrompt: MINIMAL_SYSTEM_PROMPT, skills: [], plugins: [] };
  }
  return { ...options, systemPrompt: { type: "preset", preset: "qodercli" } };
}

/** What the trace records about the options: everything but callbacks, the environment's values and the credential. */
export function describeOptions(
  options: Options,
  profile: QoderProfile,
  authKind: string,
): Record<string, unknown> {
  return {
    profile,
    authMethod: authKind,
    cwd: options.cwd,
    tools: options.tools,
    allowedTools: options.allowedTools,
    disallowedTools: options.disallowedTools,
    permissionMode: options.permissionMode,
    model: options.model ?? null,
    maxTurns: options.maxTurns ?? null,
    settingSources: options.settingSources,
    mcpServers: Object.keys(options.mcpServers ?? {}),
    strictMcpConfig: options.strictMcpConfig,
    persistSession: options.persistSession,
    skills: options.skills ?? null,
    plugins: options.plugins ?? null,
    systemPrompt:
      typeof options.systemPrompt === "string"
        ? { type: "custom", text: options.systemPrompt }
        : (options.systemPrompt ?? null),
    transport: "process",
    pathToQoderCLIExecutable: options.pathToQoderCLIExecutable,
    proxy: options.proxy ?? null,
    envVarNames: Object.keys(options.env ?? {}).sort(),
    permissionCallback: options.canUseTool !== undefined,
    preToolUseHook: (options.hooks?.PreToolUse?.length ?? 0) > 0,
  };
}

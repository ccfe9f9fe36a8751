// The isolated `config.toml` one Codex run gets: the sandbox and approval settings the harness
// depends on, the quiet settings that keep the CLI from talking to anything but the model
// endpoint, and (when given) the model provider for a custom Responses endpoint.
import type { CodexConfigObject, CodexConfigValue } from "./sdk-types.js";

/** Provider id of a custom endpoint in the generated config. */
const ENDPOINT_PROVIDER_ID = "harnesslab";
/** Variable the generated provider reads its key from (set only in the agent's environment). */
export const ENDPOINT_KEY_VARIABLE = "HARNESSLAB_CODEX_ENDPOINT_KEY";

interface CodexEndpointConfig {
  baseUrl: string;
  /** Whether a key is passed in ENDPOINT_KEY_VARIABLE; a keyless local server needs none. */
  withKey: boolean;
  maxRetries: number;
}

export interface CodexRunConfig {
  model?: string;
  sandboxMode: "workspace-write" | "read-only";
  endpoint?: CodexEndpointConfig;
  /** A forge task: the forge MCP server (mcp) or the forge's endpoint for commands (cli). */
  forge?: {
    mcp?: { server: string; url: string };
    /** Variables the agent's commands get (no credential). */
    env: Record<string, string>;
    /**
     * cli: commands must reach the forge's endpoint on the loopback of the harness's sandbox,
     * which Codex's own sandbox would block; the harness's sandbox still has no other network.
     */
    commandsReachLoopback: boolean;
  };
  /** The variant's own MCP servers (each a relay client; see ./setup.ts). */
  setupMcpServers?: Record<string, CodexConfigObject>;
}

/** The settings as a TOML-shaped object (root keys, then tables). */
export function codexConfig(run: CodexRunConfig): CodexConfigObject {
  const config: CodexConfigObject = {};
  if (run.model !== undefined) config.model = run.model;
  if (run.endpoint) config.model_provider = ENDPOINT_PROVIDER_ID;
  Object.assign(config, {
    approval_policy: "never",
    sandbox_mode: run.sandboxMode,
    web_search: "disabled",
    // AGENTS.md files are project settings; the trial gets only the harness's prompt.
    project_doc_max_bytes: 0,
    check_for_update_on_startup: false,
    analytics: { enabled: false },
    // Plugin sync reaches github.com and chatgpt.com and delays the exit by seconds.
    features: { plugins: false },
    history: { persistence: "none" },
    skills: { bundled: { enabled: false } },
    sandbox_workspace_write: {
      network_access: run.forge?.commandsReachLoopback === true,
      // Only the trial root is writable: not /tmp, not $TMPDIR.
      exclude_tmpdir_env_var: true,
      exclude_slash_tmp: true,
    },
    // Commands the agent runs see PATH, HOME and the like, never the credential variables.
    shell_environment_policy: {
      inherit: "core",
      ...(run.forge && Object.keys(run.forge.env).length > 0 ? { set: run.forge.env } : {}),
    },
  } satisfies CodexConfigObject);
  const mcpServers: CodexConfigObject = { ...run.setupMcpServers };
  if (run.forge?.mcp) mcpServers[run.forge.mcp.server] = { url: run.forge.mcp.url };
  if (Object.keys(mcpServers).length > 0) config.mcp_servers = mcpServers;
  if (run.endpoint) {
    const provider: CodexConfigObject = {
      name: "harnesslab endpoint",
      base_url: run.endpoint.baseUrl,
      wire_api: "responses",
      request_max_retries: run.endpoint.maxRetries,
      stream_max_retries: run.endpoint.maxRetries,
    };
    if (run.endpoint.withKey) provider.env_key = ENDPOINT_KEY_VARIABLE;
    config.model_providers = { [ENDPOINT_PROVIDER_ID]: provider };
  }
  return config;
}

const BARE_KEY = /^[A-Za-z0-9_-]+$/;

function tomlKey(key: string): string {
  return BARE_KEY.test(key) ? key : JSON.stringify(key);
}

function isTable(value: CodexConfigValue): value is CodexConfigObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function tomlValue(value: CodexConfigValue, path: string): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "boolean") return value ? "true" : "false";
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new Error(`codex config ${path}: not a finite number`);
    return String(value);
  }
  if (Array.isArray(value))
    return `[${value.map((v, i) => tomlValue(v, `${path}[${i}]`)).join(", ")}]`;
  const entries = Object.entries(value).map(
    ([k, v]) => `${tomlKey(k)} = ${tomlValue(v, `${path}.${k}`)}`,
  );
  return `{ ${entries.join(", ")} }`;
}

/**
 * Serializes a config object as TOML: scalars first, then one `[table]` per nested object.
 * JSON string escapes are valid TOML basic-string escapes, so strings go through JSON.stringify.
 */
export function toToml(config: CodexConfigObject): string {
  const lines: string[] = [];
  const emit = (table: CodexConfigObject, path: string[]) => {
    const scalars = Object.entries(table).filter(([, v]) => !isTable(v));
    const tables = Object.entries(table).filter(([, v]) => isTable(v)) as [
      string,
      CodexConfigObject,
    ][];
    if (path.length > 0 && (scalars.length > 0 || tables.length === 0)) {
      lines.push("", `[${path.map(tomlKey).join(".")}]`);
    }
    for (const [key, value] of scalars) {
      lines.push(`${tomlKey(key)} = ${tomlValue(value, [...path, key].join("."))}`);
    }
    for (const [key, value] of tables) emit(value, [...path, key]);
  };
  emit(config, []);
  return `${lines.join("\n").trimStart()}\n`;
}

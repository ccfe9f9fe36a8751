// Running a real host's own process (Claude Code, Codex) inside the trial's sandbox. The host runs
// the agent's approved commands itself (`npm test` runs the agent's code), so approving a command
// is not containing it: the whole CLI goes into the sandbox, with the trial and its private home
// writable, its own install readable, and one granted endpoint, its model API, reached through
// the credential-adding proxy (see src/sandbox/endpoint.ts). The credential stays outside.
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import {
  type CommandSandbox,
  type EndpointProxy,
  type GrantedEndpoint,
  SANDBOX_ENDPOINT_PORT,
  SANDBOX_ENDPOINT_SOCKET,
  startEndpointProxy,
  withGrantedEndpoints,
} from "../../sandbox/index.js";

/** What the contained process is given instead of a credential (the proxy adds the real one). */
export const CREDENTIAL_PLACEHOLDER = "harnesslab-sandboxed-credential";

/** The model API a host talks to, and how its credential travels. */
export interface HostEndpoint {
  /** Base URL as the host would use it (`https://api.anthropic.com`, `http://127.0.0.1:8080/v1`). */
  upstream: string;
  /** Headers carrying the credential, added outside the sandbox; empty for a keyless endpoint. */
  credentialHeaders: Record<string, string>;
}

export interface ContainedHost {
  proxy: EndpointProxy | null;
  /** The base URL to give the host (the forwarder inside, or the upstream when uncontained). */
  baseUrl: string;
  /** The command line that runs `command` contained, and its environment (`env` + PATH inside). */
  commandLine(
    command: readonly string[],
    env: Readonly<Record<string, string | undefined>>,
  ): { argv: string[]; env: Record<string, string> };
  close(): Promise<void>;
}

export interface ContainHostOptions {
  sandbox: CommandSandbox;
  /** The trial root: the host's working directory. */
  cwd: string;
  /** The run's private directory (the host's HOME, config, temporary files). */
  scratchDir: string;
  /** The host binary or package files the process must read. */
  installPaths: readonly string[];
  endpoint: HostEndpoint;
  timeoutMs: number;
  /** Codex starts a sandbox of its own for each command it runs. */
  allowNestedSandbox?: boolean;
  /** Further endpoints the process and its commands reach (a forge task's MCP server or API). */
  grants?: readonly GrantedEndpoint[];
}

const definedOnly = (env: Readonly<Record<string, string | undefined>>) => {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined) out[name] = value;
  return out;
};

/**
 * Prepares a host process to run contained: starts the endpoint proxy (bubblewrap only) and
 * returns how to wrap the host's command. Under --unsafe-no-sandbox the host runs as before,
 * straight to its endpoint with its credential.
 */
export async function containHost(options: ContainHostOptions): Promise<ContainedHost> {
  if (options.sandbox.kind === "none") {
    return {
      proxy: null,
      baseUrl: options.endpoint.upstream,
      commandLine: (command, env) => ({ argv: [...command], env: definedOnly(env) }),
      close: async () => {},
    };
  }
  const proxy = await startEndpointProxy({
    upstream: options.endpoint.upstream,
    headers: options.endpoint.credentialHeaders,
    dropHeaders: ["authorization", "x-api-key"],
    parentDir: dirname(options.scratchDir),
  });
  // Everything but the host's own command is known now; an SDK's spawn hook is synchronous.
  const PLACEHOLDER = "\0command";
  let prepared: { prefix: string[]; path: string };
  try {
    const forwarded = withGrantedEndpoints(
      [PLACEHOLDER],
      [
        {
          socketPath: proxy.socketPath as string,
          target: SANDBOX_ENDPOINT_SOCKET,
          port: SANDBOX_ENDPOINT_PORT,
        },
        ...(options.grants ?? []),
      ],
    );
    const wrapped = await options.sandbox.wrap(forwarded.argv, {
      cwd: options.cwd,
      writable: [options.cwd, options.scratchDir],
      readOnly: [...options.installPaths],
      protect: [join(options.cwd, ".git")],
      binds: forwarded.binds,
      env: {},
      timeoutMs: options.timeoutMs,
      privateDir: options.scratchDir,
      // An agent's whole session: it may use CPU for as long as it may run, and runtimes such
      // as Bun reserve far more address space than they use.
      limits: { cpuSeconds: Math.ceil(options.timeoutMs / 1000) * 2 + 60, memoryBytes: null },
      ...(options.allowNestedSandbox ? { allowNestedSandbox: true } : {}),
    });
    prepared = { prefix: wrapped.argv.slice(0, -1), path: wrapped.env.PATH ?? "/usr/bin:/bin" };
  } catch (error) {
    await proxy.close();
    throw error;
  }
  return {
    proxy,
    baseUrl: proxy.clientBaseUrl,
    commandLine: (command, env) => ({
      argv: [...prepared.prefix, ...command],
      env: { ...definedOnly(env), PATH: prepared.path },
    }),
    close: () => proxy.close(),
  };
}

/**
 * A spawn for SDKs that take one (`spawnClaudeCodeProcess`, `spawnQoderCLIProcess`): starts the
 * SDK's command contained, with pipes for the SDK's protocol.
 */
export function spawnContained(
  host: ContainedHost,
  request: {
    command: string;
    args: string[];
    cwd?: string;
    env: Readonly<Record<string, string | undefined>>;
    signal?: AbortSignal;
  },
) {
  const line = host.commandLine([request.command, ...request.args], request.env);
  const [program, ...args] = line.argv;
  return spawn(program as string, args, {
    ...(request.cwd === undefined ? {} : { cwd: request.cwd }),
    env: line.env,
    stdio: ["pipe", "pipe", "pipe"],
    ...(request.signal ? { signal: request.signal } : {}),
  });
}

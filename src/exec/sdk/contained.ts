// Running a real host's own process (Claude Code, Codex) inside the trial's sandbox. The host runs
// the agent's approved commands itself (`npm test` runs the agent's code), so approving a command
// is not containing it: the whole CLI goes into the sandbox, with the trial and its private home
// writable, its own install readable, and one granted endpoint, its model API, reached through
// the credential-adding proxy (see src/sandbox/endpoint.ts). The credential stays outside.
import { type ChildProcess, spawn } from "node:child_process";
import { constants as osConstants } from "node:os";
import { delimiter, dirname, join } from "node:path";
import {
  type CommandRelay,
  type CommandSandbox,
  commandEnvironment,
  type EndpointProxy,
  type GrantedEndpoint,
  type RelayedCommand,
  type RelayedResult,
  SANDBOX_COMMAND_SOCKET,
  SANDBOX_ENDPOINT_PORT,
  SANDBOX_ENDPOINT_SOCKET,
  startCommandRelay,
  startEndpointProxy,
  withGrantedEndpoints,
} from "../../sandbox/index.js";
import { isPathInside } from "../../shared/index.js";

/** What the contained process is given instead of a credential (the proxy adds the real one). */
export const CREDENTIAL_PLACEHOLDER = "harnesslab-sandboxed-credential";

/** The model API a host talks to, and how its credential travels. */
interface HostEndpoint {
  /** Base URL as the host would use it (`https://api.anthropic.com`, `http://127.0.0.1:8080/v1`). */
  upstream: string;
  /** Headers carrying the credential, added outside the sandbox; empty for a keyless endpoint. */
  credentialHeaders: Record<string, string>;
}

export interface ContainedHost {
  proxy: EndpointProxy | null;
  /** The base URL to give the host (the forwarder inside, or the upstream when uncontained). */
  baseUrl: string;
  /**
   * With `commandShell`: the program the host must run each shell command through (it takes
   * the command's script as its one argument); null when uncontained.
   */
  commandShell: string | null;
  /** The command line that runs `command` contained, and its environment (`env` + PATH inside). */
  commandLine(
    command: readonly string[],
    env: Readonly<Record<string, string | undefined>>,
  ): { argv: string[]; env: Record<string, string> };
  /** Processes started through `spawnContained`; `close` stops the ones still running. */
  track(child: ChildProcess): void;
  /** Stops what is still running of the host's sandbox, then the proxy; waits for both. */
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
  /**
   * Runs every shell command of the host in a sandbox of its own beside the host's, through the
   * command relay (Claude Code's CLAUDE_CODE_SHELL_PREFIX; see src/sandbox/command-relay.ts).
   * A command sees no process of the host's and no network; the trial writable (its `.git`
   * read-only), `writable` (the host's temporary folder, where it learns the command's final
   * directory) writable, `readOnly` readable, and nothing else of the host's files.
   */
  commandShell?: {
    readOnly: readonly string[];
    writable: readonly string[];
    /** Endpoints the commands reach on their loopback (a forge task's API for a `cli` agent). */
    grants?: readonly GrantedEndpoint[];
    /** Variables the commands get on top of the contained command environment (no secret). */
    env?: Readonly<Record<string, string>>;
    /** Folders of programs first on the commands' PATH (a forge task's program). */
    programDirs?: readonly string[];
  };
  /** Further endpoints the host process itself reaches (a forge task's MCP server). */
  grants?: readonly GrantedEndpoint[];
  /**
   * Folders of programs first on the host process's PATH, which the commands it runs itself
   * inherit (a forge task's program; under --unsafe-no-sandbox, every host's commands).
   */
  programDirs?: readonly string[];
  /** Sees the body of every model request the proxy forwards (see EndpointProxyOptions). */
  observeRequestBody?: (chunk: Buffer) => void;
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
      commandShell: null,
      commandLine: (command, env) => ({
        argv: [...command],
        env:
          options.programDirs === undefined
            ? definedOnly(env)
            : {
                ...definedOnly(env),
                PATH: [...options.programDirs, env.PATH ?? process.env.PATH ?? ""].join(delimiter),
              },
      }),
      track: () => {},
      close: async () => {},
    };
  }
  const proxy = await startEndpointProxy({
    upstream: options.endpoint.upstream,
    headers: options.endpoint.credentialHeaders,
    dropHeaders: ["authorization", "x-api-key"],
    parentDir: dirname(options.scratchDir),
    allow: modelApiRequest(new URL(options.endpoint.upstream).pathname),
    maxBodyBytes: MODEL_REQUEST_MAX_BYTES,
    ...(options.observeRequestBody ? { observeBody: options.observeRequestBody } : {}),
  });
  let relay: CommandRelay | null = null;
  // Everything but the host's own command is known now; an SDK's spawn hook is synchronous.
  const PLACEHOLDER = "\0command";
  let prepared: { prefix: string[]; path: string };
  try {
    if (options.commandShell)
      relay = await startCommandRelay({
        parentDir: dirname(options.scratchDir),
        run: relayedRun(options, options.commandShell),
      });
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
      readOnly: [...options.installPaths, ...(relay ? [relay.shellDir] : [])],
      ...(options.programDirs === undefined ? {} : { programDirs: options.programDirs }),
      protect: [join(options.cwd, ".git")],
      binds: [
        ...forwarded.binds,
        ...(relay ? [{ source: relay.socketPath, target: SANDBOX_COMMAND_SOCKET }] : []),
      ],
      env: {},
      timeoutMs: options.timeoutMs,
      privateDir: options.scratchDir,
      // The host's own runtime (Bun for Claude Code) needs more memory than an agent's command.
      limits: { cpuSeconds: hostCpuSeconds(options), memoryBytes: null },
      ...(options.allowNestedSandbox ? { allowNestedSandbox: true } : {}),
    });
    prepared = { prefix: wrapped.argv.slice(0, -1), path: wrapped.env.PATH ?? "/usr/bin:/bin" };
  } catch (error) {
    await proxy.close();
    await relay?.close();
    throw error;
  }
  const children = new Set<ChildProcess>();
  return {
    proxy,
    baseUrl: proxy.clientBaseUrl,
    commandShell: relay?.shellProgram ?? null,
    commandLine: (command, env) => ({
      argv: [...prepared.prefix, ...command],
      env: { ...definedOnly(env), PATH: prepared.path },
    }),
    track: (child) => {
      children.add(child);
    },
    close: async () => {
      await Promise.all([...children].map((child) => stopSandboxProcess(child)));
      await proxy.close();
      await relay?.close();
    },
  };
}

/** An agent's whole session may use CPU for as long as it may run (twice, for two cores), and a minute more. */
function hostCpuSeconds(options: ContainHostOptions): number {
  return Math.ceil(options.timeoutMs / 1000) * 2 + 60;
}

/** The largest model request forwarded (a long conversation with images stays well below). */
const MODEL_REQUEST_MAX_BYTES = 64 * 1024 * 1024;

/**
 * What of the model API's host a contained process may ask for, with the key added: the API's
 * own requests (GET, HEAD and POST) under its base path. Not TRACE (an upstream that echoes a
 * request would hand the key back), not other methods, nothing outside the base path. (The proxy
 * has already refused every path not in normal form, which an upstream could resolve somewhere
 * else: a gateway such as LiteLLM serves admin routes beside the API.)
 */
export function modelApiRequest(basePath: string): (method: string, path: string) => string | null {
  const base = basePath.replace(/\/+$/, "");
  return (method, path) => {
    if (method !== "GET" && method !== "POST" && method !== "HEAD")
      return `${method} is not a model API request`;
    if (base !== "" && path !== base && !path.startsWith(`${base}/`))
      return `${path} is outside the model API (${base}/…)`;
    return null;
  };
}

/**
 * For a contained host that reported its endpoint unreachable: what the proxy saw. The host
 * names the base URL it was given (the proxy's), not the endpoint that failed, and would send
 * the user to check a variable the harness set.
 */
export function upstreamFailureNote(host: ContainedHost, upstream: string): string | null {
  const failed = host.proxy
    ?.log()
    .filter((entry) => entry.upstreamError !== undefined)
    .at(-1);
  if (failed === undefined) return null;
  return `harnesslab forwards the host's model requests to ${upstream} (the base URL the host names is harnesslab's own proxy), and reaching it failed: ${failed.upstreamError}`;
}

/** How long a host's sandbox may take to end by itself once the SDK is done with it. */
const HOST_EXIT_GRACE_MS = 2_000;

/**
 * Waits for a host's sandbox to end, and kills it (bwrap, and with it every process inside) when
 * it does not within the grace period: nothing the agent started may outlive its run and
 * touch the trial while it is captured and graded.
 */
async function stopSandboxProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let timer: NodeJS.Timeout | undefined;
  const graceOver = await Promise.race([
    exited.then(() => false),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), HOST_EXIT_GRACE_MS);
    }),
  ]);
  clearTimeout(timer);
  if (!graceOver) return;
  child.kill("SIGKILL");
  await exited;
}

/** The relay's run: one command in a sandbox of its own, as the scripted host's Bash runs one. */
function relayedRun(
  options: ContainHostOptions,
  shell: NonNullable<ContainHostOptions["commandShell"]>,
) {
  const visible = [options.cwd, ...shell.writable, ...shell.readOnly];
  return async (command: RelayedCommand, signal: AbortSignal): Promise<RelayedResult> => {
    // The host's own idea of its directory; anything the sandbox would not show is the trial.
    const cwd = visible.some((dir) => isPathInside(dir, command.cwd)) ? command.cwd : options.cwd;
    const forwarded = withGrantedEndpoints(["/bin/bash", "-c", command.script], shell.grants ?? []);
    const result = await options.sandbox.run(forwarded.argv, {
      cwd,
      writable: [options.cwd, ...shell.writable],
      readOnly: [...shell.readOnly],
      ...(shell.programDirs === undefined ? {} : { programDirs: shell.programDirs }),
      protect: [join(options.cwd, ".git")],
      ...(forwarded.binds.length > 0 ? { binds: forwarded.binds } : {}),
      env: commandEnvironment(shell.env ?? {}),
      timeoutMs: options.timeoutMs,
      signal,
      privateDir: options.scratchDir,
    });
    const signalNumber =
      result.signal === null || result.signal === undefined
        ? null
        : (osConstants.signals[result.signal as NodeJS.Signals] ?? null);
    const exitCode =
      result.exitCode ?? (signalNumber !== null ? 128 + signalNumber : result.timedOut ? 124 : 126);
    const notes = result.limitsHit.map((hit) => `harnesslab: ${hit.detail}\n`).join("");
    return { stdout: result.stdout, stderr: `${result.stderr}${notes}`, exitCode };
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
  const child = spawn(program as string, args, {
    ...(request.cwd === undefined ? {} : { cwd: request.cwd }),
    env: line.env,
    stdio: ["pipe", "pipe", "pipe"],
    ...(request.signal ? { signal: request.signal } : {}),
  });
  host.track(child);
  return child;
}

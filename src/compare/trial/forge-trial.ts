// One trial's forge (I/O): the repository seeded before the agent starts (a fresh local forge,
// or a throwaway repository on a real Gitea), the agent's way in as its variant's composition
// says (the forge MCP server, or the forge's API for its commands through a gateway that holds
// the token and reaches this repository only), and the state captured after the agent stopped.
import { randomBytes } from "node:crypto";
import type { ExecutorForgeAccess } from "../../exec/index.js";
import {
  createForgeMcpEndpoint,
  createLiveRepository,
  FORGE_MCP_SERVER,
  ForgeApi,
  forgeGatewayRule,
  forgeMcpToolNames,
  MCP_PATH,
  type ServedMcpEndpoint,
  serveMcpOnLoopback,
  serveMcpOnSocket,
  startForge,
  type WriteLogEntry,
} from "../../forge/index.js";
import {
  type CommandSandbox,
  type EndpointProxy,
  forgeApiHeader,
  SANDBOX_FORGE_PORT,
  SANDBOX_FORGE_SOCKET,
  startEndpointProxy,
} from "../../sandbox/index.js";
import type { RepoState } from "../../scoring/index.js";
import type { ForgeArm, ForgeSettings, ForgeTaskSpec } from "../experiment.js";

/** What the gateway's clients are given instead of the token (the gateway adds the real one). */
const GATEWAY_TOKEN_PLACEHOLDER = "harnesslab-gateway-adds-the-token";

/** Request bodies the gateway forwards at most (the local forge's own limit). */
const GATEWAY_MAX_BODY_BYTES = 1024 * 1024;

export interface TrialForgeOptions {
  forge: ForgeTaskSpec;
  settings: ForgeSettings;
  arm: ForgeArm;
  sandbox: CommandSandbox;
  /** A harness-owned directory no sandbox sees (for the endpoint's socket). */
  privateDir: string;
  /** Where live mode's token comes from. */
  env: Readonly<Record<string, string | undefined>>;
  /** Names the throwaway repository in live mode (task, variant, trial). */
  label: string;
  /** Live mode: keep the throwaway repository after the trial (--keep-forge-repos). */
  keepRepo?: boolean;
}

export interface TrialForge {
  /** What the executor hands the agent. */
  access: ExecutorForgeAccess;
  /** The prompt preamble's forge section: the repository, and how to reach it. */
  note: string;
  /** The repository's state when the agent starts. */
  before: RepoState;
  /**
   * What `${forge.…}` in a component's MCP server or program stands for in this trial: the forge
   * as the agent's processes reach it (the gateway, or the MCP server), the token a placeholder.
   */
  placeholders: Record<string, string>;
  /** Live mode: where the throwaway repository is, for the evidence. */
  location: string;
  /** Reads the state after the agent stopped, and every write the trial made. */
  capture(): Promise<{ after: RepoState; writeLog: WriteLogEntry[] }>;
  close(): Promise<void>;
}

/** Thrown when the forge cannot be prepared or read: the trial's infrastructure error. */
class TrialForgeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TrialForgeError";
  }
}

interface ForgeBackend {
  url: string;
  apiUrl: string;
  token: string;
  owner: string;
  repo: string;
  user: string;
  before: RepoState;
  location: string;
  /** Writes the backend itself recorded (the local forge logs every write; a live one none). */
  writeLog(): WriteLogEntry[] | null;
  capture(): Promise<RepoState>;
  close(): Promise<void>;
}

async function localBackend(
  options: TrialForgeOptions & { settings: { kind: "local" } },
): Promise<ForgeBackend> {
  const forge = await startForge({
    seed: options.forge.seed,
    repo: options.forge.repo,
    user: options.settings.user,
    author: options.settings.author,
  });
  return {
    url: forge.url,
    apiUrl: forge.apiUrl,
    token: forge.token,
    owner: forge.owner,
    repo: forge.repo,
    user: forge.user,
    before: forge.snapshot()!,
    location: `a local forge (${forge.owner}/${forge.repo})`,
    writeLog: () => forge.writeLog(),
    capture: async () => {
      const state = forge.snapshot();
      if (state === undefined)
        throw new TrialForgeError(`the repository ${forge.owner}/${forge.repo} is gone`);
      return state;
    },
    close: () => forge.close(),
  };
}

/** A repository name no other trial (of this run or another) uses: `hl-<label>-<random>`. */
function throwawayName(label: string): string {
  const slug = label
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 60);
  return `hl-${slug}-${randomBytes(4).toString("hex")}`;
}

async function liveBackend(
  options: TrialForgeOptions & { settings: { kind: "gitea" } },
): Promise<ForgeBackend> {
  const { settings } = options;
  const token = options.env[settings.tokenEnv];
  if (token === undefined || token === "")
    throw new TrialForgeError(
      `live mode needs a token: set ${settings.tokenEnv} to a token of ${settings.user} on ${settings.url}`,
    );
  let live: Awaited<ReturnType<typeof createLiveRepository>>;
  try {
    live = await createLiveRepository(
      {
        url: settings.url,
        token,
        tokenEnv: settings.tokenEnv,
        owner: settings.owner,
        user: settings.user,
        author: settings.author,
      },
      throwawayName(options.label),
      options.forge.seed,
    );
  } catch (error) {
    throw new TrialForgeError((error as Error).message);
  }
  return {
    url: settings.url.replace(/\/+$/, ""),
    apiUrl: live.apiUrl,
    token,
    owner: live.owner,
    repo: live.repo,
    user: settings.user,
    before: live.before,
    location: `${settings.url.replace(/\/+$/, "")}/${live.owner}/${live.repo}${options.keepRepo ? " (kept)" : " (deleted after the trial)"}`,
    writeLog: () => null,
    capture: async () => {
      try {
        return await live.capture();
      } catch (error) {
        throw new TrialForgeError((error as Error).message);
      }
    },
    close: async () => {
      if (!options.keepRepo) await live.delete();
    },
  };
}

/** The agent's way in: the MCP server or the gateway, in its sandbox or on loopback. */
interface Entrance {
  endpoint: ExecutorForgeAccess["endpoint"];
  mcp?: ExecutorForgeAccess["mcp"];
  /** Writes it saw, for live mode's write log. */
  log(): WriteLogEntry[];
  close(): Promise<void>;
}

async function mcpEntrance(backend: ForgeBackend, options: TrialForgeOptions): Promise<Entrance> {
  const writes: WriteLogEntry[] = [];
  const api = new ForgeApi({
    apiUrl: backend.apiUrl,
    token: backend.token,
    onWrite: (entry) =>
      writes.push({
        seq: writes.length + 1,
        at: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
        actor: backend.user,
        ...entry,
      }),
  });
  const endpoint = createForgeMcpEndpoint({ api, owner: backend.owner, repo: backend.repo });
  const contained = options.sandbox.kind !== "none";
  const served: ServedMcpEndpoint = contained
    ? await serveMcpOnSocket(endpoint, options.privateDir)
    : await serveMcpOnLoopback(endpoint);
  return {
    endpoint: contained
      ? {
          url: `http://127.0.0.1:${SANDBOX_FORGE_PORT}${MCP_PATH}`,
          grant: {
            socketPath: served.socketPath as string,
            target: SANDBOX_FORGE_SOCKET,
            port: SANDBOX_FORGE_PORT,
          },
        }
      : { url: served.url },
    mcp: {
      server: FORGE_MCP_SERVER,
      tools: forgeMcpToolNames(),
      handle: (request) => endpoint.handle(request),
    },
    log: () => writes.map((w) => ({ ...w })),
    close: () => served.close(),
  };
}

/**
 * The gateway to one repository of a forge at `url`: it adds `token`, forwards only the routes
 * of `forgeGatewayRule`, and only the headers an API client sends about its request, so no
 * credential of the client's own (Authorization, Cookie, Sudo, X-Gitea-OTP) and no `?sudo=`,
 * `?token=` or `?access_token=` passes: the gateway's token is the only one, acting as its user.
 */
export function startForgeGateway(target: {
  url: string;
  token: string;
  owner: string;
  repo: string;
  parentDir: string;
  listen: "socket" | "loopback";
}): Promise<EndpointProxy> {
  return startEndpointProxy({
    upstream: target.url,
    headers: { authorization: `token ${target.token}` },
    forwardHeader: forgeApiHeader,
    dropQueryParams: ["sudo", "token", "access_token"],
    parentDir: target.parentDir,
    allow: forgeGatewayRule(target.owner, target.repo),
    maxBodyBytes: GATEWAY_MAX_BODY_BYTES,
    listen: target.listen,
    insidePort: SANDBOX_FORGE_PORT,
  });
}

async function gatewayEntrance(
  backend: ForgeBackend,
  options: TrialForgeOptions,
): Promise<Entrance> {
  const contained = options.sandbox.kind !== "none";
  const gateway = await startForgeGateway({
    ...backend,
    parentDir: options.privateDir,
    listen: contained ? "socket" : "loopback",
  });
  return {
    endpoint: contained
      ? {
          url: gateway.clientBaseUrl,
          grant: {
            socketPath: gateway.socketPath as string,
            target: SANDBOX_FORGE_SOCKET,
            port: SANDBOX_FORGE_PORT,
          },
        }
      : { url: gateway.clientBaseUrl },
    log: () =>
      gateway
        .log()
        .filter((entry) => entry.method !== "GET" && entry.method !== "HEAD")
        .map((entry, index) => ({
          seq: index + 1,
          at: "",
          method: entry.method,
          path: entry.path,
          actor: entry.refused === undefined ? backend.user : null,
          status: entry.status,
          summary: entry.refused === undefined ? {} : { refusedByGateway: entry.refused },
        })),
    close: () => gateway.close(),
  };
}

function forgeNote(
  backend: ForgeBackend,
  arm: ForgeArm,
  entrance: Entrance,
  commands: readonly string[],
): string {
  const head = `This task is about the repository ${backend.owner}/${backend.repo} on a Gitea-compatible forge; you act as ${backend.user}.`;
  const plainWords = `with any arguments, written as plain words and '…' or "…" strings (no $, pipes, redirections or other shell syntax)`;
  const way = (() => {
    if (arm.access === "mcp")
      return `Read and change its issues and pull requests with the tools of the MCP server "${FORGE_MCP_SERVER}"; they act on this repository only.`;
    if (arm.tool?.kind === "mcp-server")
      return `Read and change its issues and pull requests with the tools of the MCP server "${arm.tool.component}" (owner ${backend.owner}, repository ${backend.repo}); it is connected to this forge and authenticated as ${backend.user}.`;
    if (arm.tool?.kind === "cli")
      return `Read and change its issues and pull requests with the program \`${arm.tool.component}\`: run it ${plainWords}; it is set up for this forge and authenticated as ${backend.user}.`;
    return `Its Gitea API v1 is at ${entrance.endpoint.url}/api/v1 (FORGE_API_URL in your commands' environment); requests there are authenticated as ${backend.user} for you, so send no token. You may run ${commands.map((c) => `\`${c}\``).join(", ")} ${plainWords}.`;
  })();
  const only = !arm.only
    ? ""
    : arm.access === "mcp" || arm.tool?.kind === "mcp-server"
      ? " These tools are the only ones you have: no shell, no file tools."
      : ` Your shell runs only ${commands.map((c) => `\`${c}\``).join(", ")}; you have no other tool.`;
  return `${head} ${way}${only}`;
}

/** The variables Gitea's own clients read for their instance and token (the token a placeholder). */
function giteaClientVariables(url: string): Record<string, string> {
  // tea logs in from GITEA_INSTANCE_URL and GITEA_TOKEN (`tea login add` reads the GITEA_SERVER_*
  // pair); gitea-mcp reads GITEA_HOST and GITEA_ACCESS_TOKEN. The gateway replaces the token.
  return {
    GITEA_INSTANCE_URL: url,
    GITEA_TOKEN: GATEWAY_TOKEN_PLACEHOLDER,
    GITEA_SERVER_URL: url,
    GITEA_SERVER_TOKEN: GATEWAY_TOKEN_PLACEHOLDER,
    GITEA_HOST: url,
    GITEA_ACCESS_TOKEN: GATEWAY_TOKEN_PLACEHOLDER,
  };
}

/** Seeds the trial's repository and opens the agent's way in; throws TrialForgeError. */
export async function startTrialForge(options: TrialForgeOptions): Promise<TrialForge> {
  const { arm } = options;
  const backend =
    options.settings.kind === "local"
      ? await localBackend({ ...options, settings: options.settings })
      : await liveBackend({ ...options, settings: options.settings });
  let entrance: Entrance;
  try {
    entrance =
      arm.access === "mcp"
        ? await mcpEntrance(backend, options)
        : await gatewayEntrance(backend, options);
  } catch (error) {
    await backend.close().catch(() => {});
    throw error;
  }
  const commands =
    arm.access === "cli"
      ? options.settings.commands
      : arm.tool?.kind === "cli"
        ? [arm.tool.component]
        : [];
  const url = entrance.endpoint.url;
  const env: Record<string, string> = {
    FORGE_REPO: `${backend.owner}/${backend.repo}`,
    FORGE_USER: backend.user,
  };
  // Commands that reach the gateway get where it is, and what Gitea's clients read.
  if (arm.access === "cli" || arm.tool?.kind === "cli")
    Object.assign(
      env,
      { FORGE_URL: url, FORGE_API_URL: `${url}/api/v1` },
      giteaClientVariables(url),
    );
  return {
    access: {
      access: arm.access,
      ...(arm.tool === undefined ? {} : { tool: { ...arm.tool } }),
      owner: backend.owner,
      repo: backend.repo,
      user: backend.user,
      direct: { url: backend.url, token: backend.token },
      endpoint: entrance.endpoint,
      ...(entrance.mcp ? { mcp: entrance.mcp } : {}),
      ...(commands.length > 0 ? { commands: [...commands] } : {}),
      env,
    },
    note: forgeNote(backend, arm, entrance, commands),
    before: backend.before,
    placeholders: {
      "${forge.url}": url,
      "${forge.api_url}": `${url}/api/v1`,
      "${forge.token}": GATEWAY_TOKEN_PLACEHOLDER,
      "${forge.owner}": backend.owner,
      "${forge.repo}": backend.repo,
      "${forge.user}": backend.user,
    },
    location: backend.location,
    capture: async () => {
      const after = await backend.capture();
      return { after, writeLog: backend.writeLog() ?? entrance.log() };
    },
    close: async () => {
      await entrance.close().catch(() => {});
      await backend.close();
    },
  };
}

// A variant's setup on Codex, in the run's isolated CODEX_HOME and nothing of the user's: skills
// as links in `skills/` to the materialized, read-only folders, instructions as the global
// `AGENTS.md`, stdio MCP servers started by harnesslab in the trial's sandbox and reached by
// Codex through a relay (`[mcp_servers.<id>]` runs a small client joined to it). Codex has no
// init message: what loaded is what Codex itself did with them. A skill or instructions loaded
// when the endpoint proxy saw Codex send them to the model; a server when Codex listed its tools.
import { mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  type GrantedEndpoint,
  SANDBOX_SETUP_MCP_FIRST_PORT,
  SANDBOX_SETUP_MCP_SOCKET_DIR,
} from "../../sandbox/index.js";
import { type HostSetupReport, mcpToolName, type SetupComponent } from "../setup/contract.js";
import type { StdioMcpServer } from "../setup/mcp-stdio.js";
import { RELAY_CLIENT_SOURCE, type ServedRelay, serveRelay } from "../setup/relay.js";
import {
  fatalUnloaded,
  markedInstructions,
  runMarker,
  type SetupStartOptions,
  setupReportBook,
  skillToHand,
  sourceVerified,
  startSandboxedMcpServer,
  watchForMarkers,
} from "../setup/start.js";
import type { CodexConfigObject } from "./sdk-types.js";

export interface CodexSetupRun {
  /** `[mcp_servers.<id>]` entries for config.toml. */
  mcpServers: Record<string, CodexConfigObject>;
  /** The relays' sockets, bound into Codex's sandbox (contained runs). */
  grants: GrantedEndpoint[];
  /** Folders Codex must read (the skills' materialized folders its links point to). */
  readOnlyPaths: string[];
  /** For the endpoint proxy: marks skills and instructions loaded when their text goes out. */
  observeRequestBody: ((chunk: Buffer) => void) | undefined;
  fatalBeforeStart(): HostSetupReport[];
  /** Once the run is over: the components whose requirement says `fail` and that never loaded. */
  fatalAfterRun(): HostSetupReport[];
  reports(): HostSetupReport[];
  close(): Promise<void>;
}

export interface CodexSetupOptions extends SetupStartOptions {
  /** The run's isolated CODEX_HOME, already created. */
  codexHome: string;
  /** Whether Codex runs in the trial's sandbox (relays on sockets) or not (on the loopback). */
  contained: boolean;
  /** A harness-owned directory no sandbox sees, for the relays' sockets. */
  privateDir: string;
  /** Whether the agent's commands reach the sandbox's loopback (a forge task with cli access). */
  commandsReachLoopback: boolean;
}

/** Prepares the setup for one run; never throws for a component that fails to load. */
export async function prepareCodexSetup(options: CodexSetupOptions): Promise<CodexSetupRun> {
  const book = setupReportBook(options.setup);
  const { report, confirm } = book;
  const servers: StdioMcpServer[] = [];
  const relays: ServedRelay[] = [];
  const run: CodexSetupRun = {
    mcpServers: {},
    grants: [],
    readOnlyPaths: [],
    observeRequestBody: undefined,
    fatalBeforeStart: () => book.fatal(),
    fatalAfterRun: () => fatalUnloaded(options.setup, book.all()),
    reports: () => book.all(),
    close: async () => {
      await Promise.all(relays.map((relay) => relay.close()));
      await Promise.all(servers.map((server) => server.close()));
    },
  };
  const markers = new Map<string, string>();
  const instructions: string[] = [];
  const skillNames = new Set<string>();

  // Whatever was started before a step failed (a server, a relay) stops before the error goes on.
  try {
    for (const component of options.setup) {
      if (!(await sourceVerified(component, book))) continue;
      switch (component.mechanism) {
        case "native-skill": {
          const skill = skillToHand(component, skillNames);
          if (!skill.ok) {
            report(component, { status: "failed", reason: skill.reason });
            break;
          }
          const { name } = skill;
          skillNames.add(name);
          // Codex lists each skill it found to the model as `- <name>: <description> (file:
          // …/<folder>/SKILL.md)`; a folder name fresh for the run is what no one else could write.
          const folder = runMarker(`skill-${name}`);
          await mkdir(join(options.codexHome, "skills"), { recursive: true });
          await symlink(skill.path, join(options.codexHome, "skills", folder));
          run.readOnlyPaths.push(skill.path);
          markers.set(component.id, `${folder}/SKILL.md)`);
          report(component, {
            hostName: name,
            reason: "no model request that the endpoint proxy forwarded listed the skill",
          });
          break;
        }
        case "system-instruction": {
          const marked = await markedInstructions(component, book);
          if (marked === undefined) break;
          markers.set(component.id, marked.marker);
          instructions.push(marked.text);
          report(component, {
            reason: "no model request that the endpoint proxy forwarded carried its text",
          });
          break;
        }
        case "mcp-server": {
          if (options.commandsReachLoopback) {
            // The agent's commands could then reach the relay themselves, calling the server's tools
            // past Codex's own record of its actions (a forge task whose agent uses the CLI).
            report(component, {
              status: "failed",
              reason:
                "Codex cannot be given an MCP server of the setup when its commands reach the loopback (a forge task with cli access)",
            });
            break;
          }
          const started = await startSandboxedMcpServer(component, options);
          if (!started.ok) {
            report(component, { status: "failed", reason: started.reason });
            break;
          }
          servers.push(started.server);
          const prefix = mcpToolName(component.id, "");
          const relay = await serveRelay(
            component.id,
            started.server,
            () =>
              confirm(component.id, {
                tools: started.server.tools.map((tool) => `${prefix}${tool.name}`),
              }),
            options.contained ? { socketParent: options.privateDir } : "loopback",
          );
          relays.push(relay);
          let port = relay.port;
          if (relay.socketPath !== null) {
            port = SANDBOX_SETUP_MCP_FIRST_PORT + run.grants.length;
            run.grants.push({
              socketPath: relay.socketPath,
              target: `${SANDBOX_SETUP_MCP_SOCKET_DIR}/${run.grants.length}.sock`,
              port,
            });
          }
          run.mcpServers[component.id] = {
            command: process.execPath,
            args: ["-e", RELAY_CLIENT_SOURCE, String(port)],
            // Codex asks before an MCP call, and a trial has no one to answer (approval_policy
            // never): the call is approved, then audited by the tool policy like every action.
            default_tools_approval_mode: "approve",
          };
          report(component, { reason: "Codex never listed the server's tools" });
          break;
        }
        default:
          report(component, {
            status: "failed",
            reason: `Codex has no ${component.mechanism} harnesslab can hand it`,
          });
      }
    }
    if (instructions.length > 0)
      // The global instructions of the isolated CODEX_HOME: no project's AGENTS.md is read.
      await writeFile(join(options.codexHome, "AGENTS.md"), `${instructions.join("\n\n")}\n`);
    if (markers.size > 0) run.observeRequestBody = watchForMarkers(markers, (id) => confirm(id));
  } catch (error) {
    await run.close();
    throw error;
  }
  return run;
}

// What every host does first with a materialized setup: check that each file is the one the
// revision pinned, read a component's principal text, and start its stdio MCP server in the
// trial's sandbox. The hosts differ only in how they hand the result over.
import { createHash, randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import {
  type CommandSandbox,
  commandEnvironment,
  withGrantedEndpoints,
} from "../../sandbox/index.js";
import type { HostSetupReport, SetupComponent } from "./contract.js";
import { type StdioMcpServer, type StdioMcpStart, startStdioMcpServer } from "./mcp-stdio.js";

/** How long an MCP server may take to start and list its tools (Claude Code's default). */
const MCP_START_TIMEOUT_MS = 30_000;

async function sha256Of(path: string): Promise<string> {
  return `sha256:${createHash("sha256")
    .update(await readFile(path))
    .digest("hex")}`;
}

/** Why a materialized source is not the one the revision pinned; undefined when it is. */
export async function verifySetupFiles(component: SetupComponent): Promise<string | undefined> {
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
export async function setupMainText(component: SetupComponent): Promise<string | undefined> {
  const source = component.source;
  if (source === undefined) return undefined;
  const path = source.type === "file" ? source.path : join(source.path, "SKILL.md");
  return readFile(path, "utf8").catch(() => undefined);
}

export interface SandboxedServerOptions {
  sandbox: CommandSandbox;
  /** The trial root: the server's working directory, writable (its `.git` read-only). */
  cwd: string;
  scratchDir: string;
}

/** What a host's executor starts a setup with. */
export interface SetupStartOptions extends SandboxedServerOptions {
  setup: readonly SetupComponent[];
  /** Ends the hooks' and servers' work when the run ends. */
  signal: AbortSignal;
}

/**
 * One MCP server of the variant, in the trial's sandbox: no network, the trial writable, its own
 * source readable (as `HARNESSLAB_SOURCE`), nothing else of the machine's files.
 */
export async function startSandboxedMcpServer(
  component: SetupComponent,
  options: SandboxedServerOptions,
): Promise<StdioMcpStart> {
  const mcp = component.mcp;
  if (mcp === undefined) return { ok: false, reason: "it names no MCP server command" };
  // The agent's forge tool reaches the trial's forge gateway, and nothing else of the network.
  const forwarded = withGrantedEndpoints(
    [mcp.command, ...mcp.args],
    component.forgeGrant === undefined ? [] : [component.forgeGrant],
  );
  const wrapped = await options.sandbox.wrap(forwarded.argv, {
    cwd: options.cwd,
    writable: [options.cwd],
    readOnly: component.source === undefined ? [] : [component.source.path],
    protect: [join(options.cwd, ".git")],
    ...(forwarded.binds.length > 0 ? { binds: forwarded.binds } : {}),
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
  return { ok: true, server };
}

/**
 * Calls `found` once for each marker that passes in the stream of chunks, a marker split
 * between two chunks included.
 */
export function watchForMarkers(
  markers: ReadonlyMap<string, string>,
  found: (id: string) => void,
): (chunk: Buffer) => void {
  const pending = new Map(markers);
  const keep = Math.max(...[...markers.values()].map((m) => m.length)) - 1;
  let tail = "";
  return (chunk) => {
    if (pending.size === 0) return;
    const text = tail + chunk.toString("latin1");
    for (const [id, marker] of pending)
      if (text.includes(marker)) {
        pending.delete(id);
        found(id);
      }
    tail = text.slice(-keep);
  };
}

/**
 * A marker for text handed to a host, fresh for each run: seeing it in a model request means the
 * host sent that text, since no one could write it without having been given it (an agent that
 * echoes it was given it).
 */
export function runMarker(label: string): string {
  return `harnesslab-${label}-${randomBytes(8).toString("hex")}`;
}

/**
 * Once a run is over, the components whose requirement says `fail` and that the host never
 * confirmed: the trial did not test the setup it names. A hook whose event never came is not one
 * (its event did not happen; nothing says the hook was missing).
 */
export function fatalUnloaded(
  setup: readonly SetupComponent[],
  reports: readonly HostSetupReport[],
): HostSetupReport[] {
  return setup.flatMap((component) => {
    const report = reports.find((r) => r.component === component.id);
    if (component.onDegrade !== "fail" || report === undefined || report.status === "loaded")
      return [];
    if (component.mechanism === "native-hook" && report.status === "unconfirmed") return [];
    return [report];
  });
}

/** What a host reported of each component so far; what an executor keeps while a run goes. */
export interface SetupReportBook {
  /** Records a component's first report (`unconfirmed` unless `fields` say otherwise). */
  report(component: SetupComponent, fields: Partial<HostSetupReport>): void;
  /** The host confirmed it: `loaded`, and the reason it might not have been goes. */
  confirm(id: string, fields?: Partial<HostSetupReport>): void;
  /** Changes what is recorded (a failure the host reported later). */
  update(id: string, fields: Partial<HostSetupReport>): void;
  get(id: string): HostSetupReport | undefined;
  /** The components that failed before the host started and whose requirement says `fail`. */
  fatal(): HostSetupReport[];
  /** Every component's report, in the setup's order. */
  all(): HostSetupReport[];
}

export function setupReportBook(setup: readonly SetupComponent[]): SetupReportBook {
  const reports = new Map<string, HostSetupReport>();
  const book: SetupReportBook = {
    report: (component, fields) =>
      void reports.set(component.id, {
        component: component.id,
        mechanism: component.mechanism,
        status: "unconfirmed",
        ...fields,
      }),
    confirm: (id, fields = {}) => {
      const current = reports.get(id);
      if (current === undefined) return;
      const { reason: _unconfirmedBecause, ...rest } = current;
      reports.set(id, { ...rest, ...fields, status: "loaded" });
    },
    update: (id, fields) => {
      const current = reports.get(id);
      if (current !== undefined) reports.set(id, { ...current, ...fields });
    },
    get: (id) => reports.get(id),
    fatal: () =>
      setup.flatMap((c) => {
        const report = reports.get(c.id);
        return c.onDegrade === "fail" && report?.status === "failed" ? [report] : [];
      }),
    all: () =>
      setup.map(
        (component) =>
          reports.get(component.id) ?? {
            component: component.id,
            mechanism: component.mechanism,
            status: "unconfirmed" as const,
          },
      ),
  };
  return book;
}

/**
 * A skill component as a host takes it: its materialized folder and the name the host lists it
 * by, or why it cannot be one (not a folder; a name another skill of the setup already has,
 * where a host would load only one of the two).
 */
export function skillToHand(
  component: SetupComponent,
  namesTaken: ReadonlySet<string>,
): { ok: true; name: string; path: string } | { ok: false; reason: string } {
  const source = component.source;
  if (source === undefined || source.type !== "directory")
    return { ok: false, reason: "a skill's source must be a folder" };
  const name = source.skill?.name ?? component.id;
  if (namesTaken.has(name))
    return {
      ok: false,
      reason: `another skill of the setup is named ${name}; the host would load only one`,
    };
  return { ok: true, name, path: source.path };
}

/** Whether a component's materialized files are the pinned ones; a failure goes in the book. */
export async function sourceVerified(
  component: SetupComponent,
  book: SetupReportBook,
): Promise<boolean> {
  if (component.source === undefined) return true;
  const problem = await verifySetupFiles(component);
  if (problem !== undefined) book.report(component, { status: "failed", reason: problem });
  return problem === undefined;
}

/**
 * An instructions component as a host takes it: its text under a marker fresh for the run (the
 * marker is what says later that the host sent it). An unreadable file goes in the book.
 */
export async function markedInstructions(
  component: SetupComponent,
  book: SetupReportBook,
): Promise<{ marker: string; text: string } | undefined> {
  const text = await setupMainText(component);
  if (text === undefined) {
    book.report(component, { status: "failed", reason: "its instructions file cannot be read" });
    return undefined;
  }
  const marker = runMarker(`instructions-${component.id}`);
  return { marker, text: `<!-- ${marker} -->\n${text.trim()}` };
}

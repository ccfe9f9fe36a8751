// A variant's setup for one trial: its components' sources copied (and checked against the hashes
// the revision pinned) into a harness-owned folder beside the trial, never inside it; checked
// again once the agent is done; and `setup.json`, what the host reported of each component.
import { createHash } from "node:crypto";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { SetupDocument, TrialSetupEntry } from "../../artifacts/index.js";
import { SETUP_VERSION } from "../../artifacts/index.js";
import type { RuntimeReceipt, SetupComponent } from "../../exec/index.js";
import type { ToolUse } from "../../policy/index.js";
import { readRegularFile } from "../../shared/index.js";
import type { PlannedSetupComponent } from "../run/assemble.js";

/** The one placeholder a setup command may hold (checked by the compiler, HL2027). */
const SOURCE_PLACEHOLDER = "${source}";

/** A source too large to copy for every trial is refused at compile time; this is a backstop. */
const MAX_SOURCE_FILE_BYTES = 16 * 1024 * 1024;

export class SetupMaterializeError extends Error {}

function sha256(bytes: Uint8Array): string {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}

const fill = (value: string, sourcePath: string | undefined) =>
  sourcePath === undefined ? value : value.split(SOURCE_PLACEHOLDER).join(sourcePath);

/**
 * Copies each component's source into `dir/<component>/`, refusing any file whose bytes are not
 * the ones the revision pinned (a source edited since the run started is another setup), and
 * makes the copy read-only. Returns the components as the executor takes them.
 */
export async function materializeSetup(
  planned: readonly PlannedSetupComponent[],
  dir: string,
): Promise<SetupComponent[]> {
  const components: SetupComponent[] = [];
  for (const component of planned) {
    const { contract } = component;
    let sourcePath: string | undefined;
    if (contract.source !== undefined) {
      if (component.sourcePath === undefined)
        throw new SetupMaterializeError(
          `component ${contract.id}: where its source lies is not known`,
        );
      const home = join(dir, contract.id);
      sourcePath =
        contract.source.type === "file" ? join(home, basename(component.sourcePath)) : home;
      for (const file of contract.source.files) {
        const from =
          contract.source.type === "file"
            ? component.sourcePath
            : join(component.sourcePath, file.path);
        const read = await readRegularFile(from, MAX_SOURCE_FILE_BYTES);
        if (!read.ok)
          throw new SetupMaterializeError(
            `component ${contract.id}: its source file ${from} ${read.error}`,
          );
        if (sha256(read.value) !== file.sha256)
          throw new SetupMaterializeError(
            `component ${contract.id}: its source file ${from} changed since the run started (the revision pinned another content); run again to compare the new setup`,
          );
        const to = contract.source.type === "file" ? sourcePath : join(home, file.path);
        await mkdir(dirname(to), { recursive: true });
        await writeFile(to, read.value, { mode: 0o444 });
      }
    }
    const mcp = contract.mcp;
    const hook = contract.hook;
    components.push({
      id: contract.id,
      kind: contract.componentKind,
      mechanism: component.mechanism,
      strength: component.strength,
      onDegrade: component.onDegrade,
      ...(contract.description === undefined ? {} : { description: contract.description }),
      ...(contract.source === undefined || sourcePath === undefined
        ? {}
        : {
            source: {
              path: sourcePath,
              type: contract.source.type,
              files: contract.source.files.map((f) => ({ ...f })),
              ...(contract.source.skill === undefined
                ? {}
                : { skill: { ...contract.source.skill } }),
            },
          }),
      ...(mcp === undefined
        ? {}
        : {
            mcp: {
              command: fill(mcp.command, sourcePath),
              args: mcp.args.map((a) => fill(a, sourcePath)),
              env: Object.fromEntries(mcp.env.map((e) => [e.name, fill(e.value, sourcePath)])),
            },
          }),
      ...(hook === undefined
        ? {}
        : { hook: { event: hook.event, command: hook.command.map((c) => fill(c, sourcePath)) } }),
      ...(contract.tools === undefined ? {} : { tools: [...contract.tools] }),
    });
  }
  await lockTree(dir, components);
  return components;
}

/** Folders read-only too: nothing may add a file to a materialized skill either. */
async function lockTree(dir: string, components: readonly SetupComponent[]): Promise<void> {
  const folders = new Set<string>();
  for (const component of components) {
    const source = component.source;
    if (source === undefined) continue;
    const home = join(dir, component.id);
    for (const file of source.files) {
      let at = dirname(source.type === "file" ? source.path : join(home, file.path));
      while (at.startsWith(home)) {
        folders.add(at);
        at = dirname(at);
      }
    }
  }
  // Deepest first, so a parent is locked after its children are done.
  for (const folder of [...folders].sort((a, b) => b.length - a.length)) await chmod(folder, 0o555);
}

/** Per component, whether every materialized file still has its pinned content. */
export async function setupIntact(
  components: readonly SetupComponent[],
): Promise<Map<string, boolean>> {
  const intact = new Map<string, boolean>();
  for (const component of components) {
    const source = component.source;
    if (source === undefined) continue;
    let same = true;
    for (const file of source.files) {
      const path = source.type === "file" ? source.path : join(source.path, file.path);
      const bytes = await readFile(path).catch(() => undefined);
      if (bytes === undefined || sha256(bytes) !== file.sha256) same = false;
    }
    intact.set(component.id, same);
  }
  return intact;
}

/** `setup.json`: each component, its files, what the host reported, and its tools' calls. */
export function setupDocument(input: {
  host: string;
  components: readonly SetupComponent[];
  receipt: RuntimeReceipt | undefined;
  toolUse: readonly ToolUse[];
  intact: ReadonlyMap<string, boolean>;
}): SetupDocument {
  const receipt = input.receipt;
  const reports = new Map((receipt?.setup ?? []).map((r) => [r.component, r]));
  // A host that reported nothing of its setup either never started (no receipt, or one that
  // ended before the agent did anything) or ran without confirming anything.
  const silent =
    receipt === undefined || (receipt.setup === undefined && receipt.status === "infra_error")
      ? ("not-run" as const)
      : ("unconfirmed" as const);
  return {
    schemaVersion: SETUP_VERSION,
    host: input.host,
    components: input.components.map((component) => {
      const report = reports.get(component.id);
      const prefix = `mcp__${component.id}__`;
      const toolCalls: Record<string, number> = {};
      for (const use of input.toolUse)
        if (use.decision === "allow" && use.tool.startsWith(prefix))
          toolCalls[use.tool] = (toolCalls[use.tool] ?? 0) + 1;
      return {
        id: component.id,
        kind: component.kind,
        mechanism: component.mechanism,
        planned: component.strength,
        onDegrade: component.onDegrade,
        status: report?.status ?? silent,
        files: component.source?.files.map((f) => ({ ...f })) ?? [],
        intactAfterRun: input.intact.get(component.id) ?? null,
        host: report ?? null,
        toolCalls,
      };
    }),
  };
}

/** What metrics.json keeps of setup.json. */
export function trialSetupEntries(document: SetupDocument): TrialSetupEntry[] {
  return document.components.map((c) => ({
    component: c.id,
    mechanism: c.mechanism,
    status: c.status,
    toolCalls: Object.values(c.toolCalls).reduce((sum, n) => sum + n, 0),
  }));
}

/**
 * What the tool policy allows of a setup: its MCP servers' tools, its skills (and reads of their
 * folders) and its subagents. Anything of a component the variant does not have stays denied.
 */
export function setupPolicy(components: readonly SetupComponent[]): {
  mcpServers: string[];
  skills: string[];
  subagents: string[];
  readableRoots: string[];
} {
  const skills = components.filter((c) => c.mechanism === "native-skill");
  return {
    mcpServers: components.filter((c) => c.mechanism === "mcp-server").map((c) => c.id),
    skills: [
      ...new Set(skills.flatMap((c) => [c.id, ...(c.source?.skill ? [c.source.skill.name] : [])])),
    ],
    subagents: components.filter((c) => c.mechanism === "subagent").map((c) => c.id),
    readableRoots: skills.flatMap((c) => (c.source === undefined ? [] : [c.source.path])),
  };
}

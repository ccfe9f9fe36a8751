// A variant's setup for one trial: its components' sources copied (and checked against the hashes
// the revision pinned) into a harness-owned folder beside the trial, never inside it; checked
// again once the agent is done; and `setup.json`, what the host reported of each component.
import { createHash } from "node:crypto";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { basename, dirname, isAbsolute, join } from "node:path";
import type { SetupDocument, TrialSetupEntry } from "../../artifacts/index.js";
import { SETUP_VERSION } from "../../artifacts/index.js";
import type { RuntimeReceipt, SetupComponent } from "../../exec/index.js";
import type { ComponentContract } from "../../ir/index.js";
import { FORGE_PLACEHOLDERS } from "../../language/index.js";
import type { ToolUse } from "../../policy/index.js";
import type { GrantedEndpoint } from "../../sandbox/index.js";
import { readRegularFile } from "../../shared/index.js";
import type { PlannedForgeProgram, PlannedSetupComponent } from "../run/assemble.js";

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
 * Copies a component's source into `dir/<component>/`, refusing any file whose bytes are not the
 * ones the revision pinned (a source edited since the run started is another setup). Returns
 * where it now is (the folder, or the file), undefined for a component without a source.
 */
async function copySource(
  contract: ComponentContract,
  compiledPath: string | undefined,
  dir: string,
): Promise<string | undefined> {
  if (contract.source === undefined) return undefined;
  if (compiledPath === undefined)
    throw new SetupMaterializeError(`component ${contract.id}: where its source lies is not known`);
  const home = join(dir, contract.id);
  const sourcePath = contract.source.type === "file" ? join(home, basename(compiledPath)) : home;
  for (const file of contract.source.files) {
    const from = contract.source.type === "file" ? compiledPath : join(compiledPath, file.path);
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
  return sourcePath;
}

/**
 * Copies each component's source into `dir/<component>/` (checked against the revision's hashes)
 * and makes the copy read-only. Returns the components as the executor takes them.
 */
export async function materializeSetup(
  planned: readonly PlannedSetupComponent[],
  dir: string,
): Promise<SetupComponent[]> {
  const components: SetupComponent[] = [];
  for (const component of planned) {
    const { contract } = component;
    const sourcePath = await copySource(contract, component.sourcePath, dir);
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
      ...(mcp === undefined ? {} : { mcp: filledProgram(mcp, sourcePath) }),
      ...(hook === undefined
        ? {}
        : { hook: { event: hook.event, command: hook.command.map((c) => fill(c, sourcePath)) } }),
      ...(contract.tools === undefined ? {} : { tools: [...contract.tools] }),
    });
  }
  await lockTree(dir, components);
  return components;
}

type ProgramSpec = NonNullable<ComponentContract["cli"]>;

/** A program's command, arguments and variables with `${source}` replaced. */
function filledProgram(
  program: ProgramSpec,
  sourcePath: string | undefined,
): { command: string; args: string[]; env: Record<string, string> } {
  return {
    command: fill(program.command, sourcePath),
    args: program.args.map((a) => fill(a, sourcePath)),
    env: Object.fromEntries(program.env.map((e) => [e.name, fill(e.value, sourcePath)])),
  };
}

/** Replaces each `${forge.…}` of `value` (an unknown one stays; the compiler refused it). */
function fillForge(value: string, placeholders: Readonly<Record<string, string>>): string {
  return value.replace(/\$\{forge\.[a-z_]+\}/g, (found) => placeholders[found] ?? found);
}

/**
 * The setup as a trial hands it over: `${forge.…}` in every MCP server's command filled with
 * the trial's forge (empty outside a forge task), and the component that is the agent's forge
 * tool granted the forge's gateway in its sandbox. No other server reaches the forge.
 */
export function connectSetupToForge(
  components: readonly SetupComponent[],
  forge:
    | {
        placeholders: Readonly<Record<string, string>>;
        tool?: { component: string; kind: "mcp-server" | "cli" };
        grant?: GrantedEndpoint;
      }
    | undefined,
): SetupComponent[] {
  const placeholders = forge?.placeholders ?? EMPTY_FORGE_PLACEHOLDERS;
  return components.map((component) => {
    const mcp = component.mcp;
    if (mcp === undefined) return component;
    const isTool = forge?.tool?.kind === "mcp-server" && forge.tool.component === component.id;
    return {
      ...component,
      mcp: {
        command: fillForge(mcp.command, placeholders),
        args: mcp.args.map((a) => fillForge(a, placeholders)),
        env: Object.fromEntries(
          Object.entries(mcp.env).map(([name, value]) => [name, fillForge(value, placeholders)]),
        ),
      },
      ...(isTool && forge?.grant !== undefined ? { forgeGrant: forge.grant } : {}),
    };
  });
}

const EMPTY_FORGE_PLACEHOLDERS: Readonly<Record<string, string>> = Object.fromEntries(
  FORGE_PLACEHOLDERS.map((name) => [name, ""]),
);

/** Single-quotes a word for sh: every character as written. */
const shellQuoted = (word: string) => `'${word.split("'").join("'\\''")}'`;

/**
 * A forge task's program (a `cli` tool of the variant's setup) for one trial: its source copied
 * and checked like a setup component's (in `dir/.source/`), and in `dir` an executable named
 * after the component that runs the program with its variables (`${source}` and `${forge.…}`
 * filled), its arguments, then the agent's. Returns the folder to put first on the agent's
 * commands' PATH. The executable takes its own folder off PATH before it looks the program up,
 * so a tool named after its program (`tea`) runs the program, not itself.
 */
export async function materializeForgeProgram(
  planned: PlannedForgeProgram,
  dir: string,
  placeholders: Readonly<Record<string, string>>,
): Promise<string> {
  const { contract } = planned;
  // One folder holds both, so the one read-only folder the sandbox binds has what the program needs.
  const sources = join(dir, ".source");
  const sourcePath = await copySource(contract, planned.sourcePath, sources);
  const filled = filledProgram(contract.cli, sourcePath);
  const command = fillForge(filled.command, placeholders);
  if (command.includes("/") && !isAbsolute(command))
    throw new SetupMaterializeError(
      `component ${contract.id}: its cli command ${command} is a relative path; give a program on PATH, an absolute path, or \${source}/… for a file of its source`,
    );
  // A program of the component's own source runs as it is (its copy is read-only, not executable).
  if (sourcePath !== undefined && command.startsWith(`${sourcePath}/`)) await chmod(command, 0o555);
  if (sourcePath !== undefined && command === sourcePath) await chmod(command, 0o555);
  const words = [
    "/usr/bin/env",
    ...Object.entries(filled.env).map(
      ([name, value]) => `${name}=${fillForge(value, placeholders)}`,
    ),
    command,
    ...filled.args.map((a) => fillForge(a, placeholders)),
  ];
  await mkdir(dir, { recursive: true });
  await writeFile(
    join(dir, contract.id),
    [
      "#!/bin/sh",
      `# harnesslab: the forge tool ${contract.id}`,
      `PATH=\${PATH#${shellQuoted(`${dir}:`)}}`,
      `exec ${words.map(shellQuoted).join(" ")} "$@"`,
      "",
    ].join("\n"),
    { mode: 0o555 },
  );
  if (sourcePath !== undefined && contract.source?.type === "directory")
    await lockTree(sources, [
      {
        id: contract.id,
        source: { path: sourcePath, type: "directory", files: contract.source.files },
      },
    ]);
  await chmod(dir, 0o555);
  return dir;
}

/** Folders read-only too: nothing may add a file to a materialized skill either. */
async function lockTree(
  dir: string,
  components: readonly Pick<SetupComponent, "id" | "source">[],
): Promise<void> {
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

// The v0.2 clauses of a component (source, mcp, cli, hook, tools): where each may appear, what it must
// hold, and what a component's source is once read. The file system is the caller's: sources
// are read through the `SourceReader` the compilation was given.
import { parse as parseYaml } from "yaml";
import type { ComponentContract, ComponentSource } from "../ir/index.js";
import type { ComponentDecl, ProgramNode, SourceFileRead, SourceReader, Span } from "./types.js";

/** A component's source once read and checked, as the IR records it. */
export type ReadSource = ComponentSource;

/** Whether a component uses anything of v0.2, which makes the whole bundle IR 0.2.0. */
export function usesV02(component: ComponentDecl): boolean {
  return (
    component.source !== undefined ||
    component.mcp !== undefined ||
    component.cli !== undefined ||
    component.hook !== undefined ||
    component.tools !== undefined ||
    component.kind?.value === "instructions" ||
    component.kind?.value === "subagent"
  );
}

/** Why a source path may not be used: it must be a plain relative path inside its file's folder. */
function pathProblem(path: string): string | undefined {
  if (path === "") return "is empty";
  if (path.startsWith("/") || /^[A-Za-z]:/.test(path)) return "is absolute";
  if (path.includes("\\")) return "holds a backslash (write / between folders)";
  const segments = path.replace(/\/$/, "").split("/");
  if (segments.some((s) => s === "..")) return "leaves the folder of its .harness file (..)";
  if (segments.some((s) => s === "" || s === ".")) return "holds an empty or '.' segment";
  return undefined;
}

const MARKDOWN = /\.(md|markdown)$/i;

/** The `name` and `description` of a SKILL.md's YAML front matter, or why there are none. */
function skillFrontMatter(
  text: string,
): { ok: true; name: string; description: string } | { ok: false; why: string } {
  const match = /^---\r?\n([\s\S]*?)\r?\n---(\r?\n|$)/.exec(text);
  if (match === null)
    return {
      ok: false,
      why: "SKILL.md starts with no front matter (--- name: … description: … ---)",
    };
  let data: unknown;
  try {
    data = parseYaml(match[1] as string);
  } catch (error) {
    return {
      ok: false,
      why: `SKILL.md's front matter is not YAML: ${(error as Error).message.split("\n")[0]}`,
    };
  }
  const fields = (data ?? {}) as Record<string, unknown>;
  const name = fields.name;
  const description = fields.description;
  if (typeof name !== "string" || !/^[a-z0-9]+(-[a-z0-9]+)*$/.test(name) || name.length > 64)
    return {
      ok: false,
      why: "SKILL.md's front matter needs a name: lower-case letters, digits and hyphens, at most 64 characters",
    };
  if (typeof description !== "string" || description.trim() === "" || description.length > 1024)
    return {
      ok: false,
      why: "SKILL.md's front matter needs a description: what the skill does and when to use it, at most 1024 characters",
    };
  return { ok: true, name, description };
}

/**
 * Checks one component's v0.2 clauses and reads its source. Returns the source as the IR records
 * it (undefined when there is none, or when it could not be read: a diagnostic then says why).
 */
export function checkV02Clauses(
  component: ComponentDecl,
  uri: string,
  reader: SourceReader | undefined,
  report: (code: string, span: Span, message: string) => void,
): ReadSource | undefined {
  const label = component.name === undefined ? "this component" : `"${component.name.text}"`;
  const kind = component.kind?.value;
  const onlyOn = (clause: string, span: Span, wanted: string) =>
    report(
      "HL2021",
      span,
      `"${clause}" belongs on a component of kind ${wanted}; ${label} is of kind ${kind ?? "(none)"}`,
    );
  for (const block of ["mcp", "cli"] as const) {
    const program = component[block];
    if (program === undefined) continue;
    if (kind !== "tool") onlyOn(block, program.keyword, "tool");
    if (program.command === undefined)
      report(
        "HL2022",
        program.keyword,
        `the ${block} block of ${label} has no command: add command "<program>" (${block === "mcp" ? "the stdio MCP server to start" : "the program the agent runs by the component's name"})`,
      );
    const names = new Map<string, Span>();
    for (const { name } of program.env) {
      const first = names.get(name.text);
      if (first === undefined) names.set(name.text, name.span);
      else
        report(
          "HL2023",
          name.span,
          `variable "${name.text}" is already set at ${first.line}:${first.column} in the env of ${label}`,
        );
    }
  }
  if (component.mcp !== undefined && component.cli !== undefined)
    report(
      "HL2021",
      component.cli.keyword,
      `${label} is already an MCP server (mcp); a tool is an MCP server or a command-line program (cli), not both: declare two components`,
    );
  if (component.hook !== undefined) {
    if (kind !== "hook") onlyOn("hook", component.hook.keyword, "hook");
    if (component.hook.event === undefined || component.hook.command.length === 0)
      report(
        "HL2022",
        component.hook.keyword,
        `the hook block of ${label} needs an event and a command: hook { event Stop command ["node", "hooks/stop.mjs"] }`,
      );
  }
  checkPlaceholders(component, label, report);
  if (component.tools !== undefined && kind !== "subagent")
    onlyOn("tools", component.tools.keyword, "subagent");
  if (kind === "subagent" && component.source === undefined)
    report(
      "HL2022",
      component.name?.span ?? component.keyword,
      `subagent ${label} has no source: add source "<prompt.md>", the Markdown file with its instructions`,
    );
  if (kind === "instructions" && component.source === undefined)
    report(
      "HL2022",
      component.name?.span ?? component.keyword,
      `instructions ${label} have no source: add source "<file.md>", the Markdown file the host reads`,
    );
  const source = component.source;
  if (source === undefined) return undefined;
  const bad = pathProblem(source.value);
  if (bad !== undefined) {
    report(
      "HL2024",
      source.span,
      `source "${source.value}" ${bad}; give a path inside the folder of ${uri}`,
    );
    return undefined;
  }
  if (reader === undefined) {
    report(
      "HL2025",
      source.span,
      `source "${source.value}" cannot be read: this compilation was given no source reader (compile the file from disk)`,
    );
    return undefined;
  }
  const read = reader(uri, source.value, component.name?.text ?? "");
  if (!read.ok) {
    report("HL2025", source.span, `source "${source.value}" cannot be read: ${read.error}`);
    return undefined;
  }
  const files = [...read.files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const result: ReadSource = {
    path: source.value,
    type: read.type,
    files: files.map(({ path, sha256 }) => ({ path, sha256 })),
  };
  const malformed = (why: string) => {
    report("HL2026", source.span, `source "${source.value}" of ${label}: ${why}`);
    return undefined;
  };
  if (kind === "skill") {
    if (read.type !== "directory")
      return malformed("a skill's source is an Agent Skills folder (a folder with a SKILL.md)");
    const skill = files.find((f) => f.path === "SKILL.md");
    if (skill === undefined) return malformed("the folder has no SKILL.md");
    if (skill.text === undefined) return malformed("SKILL.md is not UTF-8 text, or too large");
    const front = skillFrontMatter(skill.text);
    if (!front.ok) return malformed(front.why);
    return { ...result, skill: { name: front.name, description: front.description } };
  }
  if (kind === "instructions" || kind === "subagent") {
    const one: SourceFileRead | undefined = files[0];
    if (read.type !== "file" || one === undefined || !MARKDOWN.test(source.value))
      return malformed(
        `the source of ${kind === "instructions" ? "instructions" : "a subagent"} is one Markdown file (.md)`,
      );
    if (one.text === undefined) return malformed("it is not UTF-8 text, or too large");
  }
  return result;
}

const SOURCE_PLACEHOLDER = "${source}";

/**
 * What a forge task's trial fills in an MCP server's or a program's command, arguments and
 * variables: the forge as that process reaches it (through the harness's gateway), its token a
 * placeholder the gateway replaces. Outside a forge task each is empty.
 */
export const FORGE_PLACEHOLDERS = [
  "${forge.url}",
  "${forge.api_url}",
  "${forge.token}",
  "${forge.owner}",
  "${forge.repo}",
  "${forge.user}",
] as const;

/**
 * An MCP server's, program's or hook's command may name files of the component's own source
 * through `${source}` (they are materialized outside the trial, at a path only the run knows),
 * and an MCP server or program the trial's forge through `${forge.…}`; any other `${…}` would
 * reach the program as written, which is never what was meant.
 */
function checkPlaceholders(
  component: ComponentDecl,
  label: string,
  report: (code: string, span: Span, message: string) => void,
): void {
  const programValues = [component.mcp, component.cli].flatMap((program) =>
    program === undefined
      ? []
      : [
          ...(program.command === undefined ? [] : [program.command]),
          ...program.args,
          ...program.env.map((e) => e.value),
        ],
  );
  const check = (values: typeof programValues, forgeAllowed: boolean) => {
    for (const value of values)
      for (const match of value.value.matchAll(/\$\{([^}]*)\}/g)) {
        if (match[0] === SOURCE_PLACEHOLDER) {
          if (component.source === undefined)
            report(
              "HL2027",
              value.span,
              `${SOURCE_PLACEHOLDER} names the component's source, and ${label} has none: add source "<file or folder>"`,
            );
        } else if (!forgeAllowed || !(FORGE_PLACEHOLDERS as readonly string[]).includes(match[0]))
          report(
            "HL2027",
            value.span,
            `"${match[0]}" is not a placeholder harnesslab fills here; ${forgeAllowed ? `the placeholders are ${SOURCE_PLACEHOLDER} (the folder or file of the component's source) and ${FORGE_PLACEHOLDERS.join(", ")} (a forge task's repository)` : `a hook's one placeholder is ${SOURCE_PLACEHOLDER} (the folder or file of the component's source)`}`,
          );
      }
  };
  check(programValues, true);
  check(component.hook?.command ?? [], false);
}

/** The IR fields of a component's v0.2 clauses. */
export function v02Fields(
  component: ComponentDecl,
  source: ReadSource | undefined,
): Pick<ComponentContract, "source" | "mcp" | "cli" | "hook" | "tools"> {
  const { mcp, cli, hook, tools } = component;
  const program = (node: ProgramNode) => ({
    command: node.command?.value ?? "",
    args: node.args.map((a) => a.value),
    env: node.env.map(({ name, value }) => ({ name: name.text, value: value.value })),
  });
  return {
    ...(source === undefined ? {} : { source }),
    ...(mcp?.command === undefined ? {} : { mcp: program(mcp) }),
    ...(cli?.command === undefined ? {} : { cli: program(cli) }),
    ...(hook?.event === undefined || hook.command.length === 0
      ? {}
      : {
          hook: {
            event: hook.event.text as NonNullable<ComponentContract["hook"]>["event"],
            command: hook.command.map((c) => c.value),
          },
        }),
    ...(tools === undefined ? {} : { tools: tools.names.map((n) => n.text) }),
  };
}

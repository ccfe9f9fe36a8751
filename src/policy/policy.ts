import { readlink, realpath } from "node:fs/promises";
import { isAbsolute } from "node:path";
import { checkCommand, isPlainArgv } from "./command.js";
import {
  absoluteFromRoot,
  globPatternEscapes,
  isGitPath,
  isHomeRelative,
  PathResolutionError,
  rawPathProblem,
  relativeInside,
  resolvePhysicalPath,
} from "./paths.js";
import { describeToolUse, replaceRootAliases, summarizeInput } from "./summary.js";
import { normalizeToolName, TOOL_KINDS } from "./tools.js";
import {
  type CanonicalTool,
  type PathResolverFs,
  type PolicyDecision,
  type PolicyDecisionRecord,
  type PolicyRule,
  SETUP_SKILL_NAMESPACE,
  type ToolPolicy,
  type ToolPolicyOptions,
  type ToolUse,
} from "./types.js";

const defaultResolver: PathResolverFs = { realpath, readlink };

type Verdict = Omit<PolicyDecision, "seq" | "tool">;

function deny(rule: Exclude<PolicyRule, "allowed">, reason: string): Verdict {
  return { decision: "deny", rule, reason };
}

function field(input: unknown, name: string): unknown {
  return typeof input === "object" && input !== null
    ? (input as Record<string, unknown>)[name]
    : undefined;
}

/** Checks the manifest-derived settings once; a bad setting is a programmer error, not a denial. */
function normalizeOptions(options: ToolPolicyOptions): ToolPolicy["config"] {
  if (!isAbsolute(options.trialRoot)) {
    throw new Error(`createToolPolicy: trialRoot must be absolute, got ${options.trialRoot}`);
  }
  const allowedWrites = [...new Set(options.allowedWrites)].sort();
  for (const path of allowedWrites) {
    const segments = path.split("/");
    if (
      path === "" ||
      path.includes("\\") ||
      isAbsolute(path) ||
      segments.some((s) => s === "" || s === "." || s === "..") ||
      isGitPath(path)
    ) {
      throw new Error(
        `createToolPolicy: allowedWrites entry ${JSON.stringify(path)} must be a relative /-separated file path without empty, ".", ".." or .git segments`,
      );
    }
  }
  const allowedCommands = options.allowedCommands.map((argv) => [...argv]);
  for (const argv of allowedCommands) {
    if (!isPlainArgv(argv)) {
      throw new Error(
        `createToolPolicy: allowedCommands entry ${JSON.stringify(argv)} must be a non-empty argv of plain words (letters, digits and _./:=@%+,-)`,
      );
    }
  }
  const tools: CanonicalTool[] = [];
  for (const name of options.tools) {
    const canonical = normalizeToolName(name);
    if (canonical !== null && !tools.includes(canonical)) tools.push(canonical);
  }
  const mcpTools = [...new Set(options.mcpTools ?? [])].sort();
  for (const name of mcpTools)
    if (!/^mcp__[A-Za-z0-9_-]+__[A-Za-z0-9_-]+$/.test(name))
      throw new Error(
        `createToolPolicy: mcpTools entry ${JSON.stringify(name)} must be mcp__<server>__<tool>`,
      );
  const mcpServers = [...new Set(options.mcpServers ?? [])].sort();
  for (const server of mcpServers)
    if (!/^[A-Za-z0-9_-]+$/.test(server))
      throw new Error(
        `createToolPolicy: mcpServers entry ${JSON.stringify(server)} must be a server name (letters, digits, _ and -)`,
      );
  const commandPrograms = [...new Set(options.commandPrograms ?? [])].sort();
  for (const program of commandPrograms)
    if (!/^[A-Za-z0-9_.+-]+$/.test(program))
      throw new Error(
        `createToolPolicy: commandPrograms entry ${JSON.stringify(program)} must be a program name (no path, no spaces)`,
      );
  const names = (list: readonly string[] | undefined, what: string) => {
    const unique = [...new Set(list ?? [])].sort();
    for (const name of unique)
      if (!/^[A-Za-z0-9_][A-Za-z0-9_.-]*$/.test(name))
        throw new Error(
          `createToolPolicy: ${what} entry ${JSON.stringify(name)} must be a name (letters, digits, _ . and -)`,
        );
    return unique;
  };
  const readableRoots = [...new Set(options.readableRoots ?? [])].sort();
  for (const root of readableRoots)
    if (!isAbsolute(root))
      throw new Error(
        `createToolPolicy: readableRoots entry ${JSON.stringify(root)} must be absolute`,
      );
  return {
    trialRoot: options.trialRoot,
    allowedWrites,
    allowedCommands,
    tools,
    mcpTools,
    mcpServers,
    commandPrograms,
    skills: names(options.skills, "skills"),
    subagents: names(options.subagents, "subagents"),
    readableRoots,
  };
}

/**
 * The bounded permission callback (docs/policy.md) as an object: every tool call an agent makes is
 * put to `decide`, which applies the rules in `docs/policy.md` and records the decision.
 */
export function createToolPolicy(options: ToolPolicyOptions): ToolPolicy {
  const config = normalizeOptions(options);
  const now = options.now ?? Date.now;
  const fs = options.resolver ?? defaultResolver;
  const startedAt = now();
  const visible = new Set<CanonicalTool>(config.tools);
  const writable = new Set(config.allowedWrites);
  const mcpTools = new Set(config.mcpTools);
  /** The setup's server a tool name belongs to (`mcp__<server>__<tool>`), if any. */
  const setupServerOf = (name: string): string | undefined => {
    if (!/^mcp__[A-Za-z0-9_-]+$/.test(name)) return undefined;
    // A server name may itself hold "__": try every split, the longest server name first.
    const rest = name.slice("mcp__".length);
    for (let at = rest.lastIndexOf("__"); at > 0; at = rest.lastIndexOf("__", at - 1)) {
      const server = rest.slice(0, at);
      if (config.mcpServers.includes(server) && at + 2 < rest.length) return server;
    }
    return undefined;
  };
  /** The host tools a setup brings (Skill, Agent), each bounded to the setup's own names. */
  const setupTool = (name: string): ((input: unknown) => Verdict) | null => {
    if (name === "Skill" && config.skills.length > 0)
      return (input) => {
        const skill = field(input, "skill");
        const bare =
          typeof skill === "string" && skill.startsWith(`${SETUP_SKILL_NAMESPACE}:`)
            ? skill.slice(SETUP_SKILL_NAMESPACE.length + 1)
            : skill;
        return typeof bare === "string" && config.skills.includes(bare)
          ? { decision: "allow", rule: "allowed", reason: `the variant's skill ${bare}` }
          : deny(
              "not-in-setup",
              `${JSON.stringify(skill)} is not a skill of the variant's setup (${config.skills.join(", ")})`,
            );
      };
    if ((name === "Agent" || name === "Task") && config.subagents.length > 0)
      return (input) => {
        const agent = field(input, "subagent_type");
        return typeof agent === "string" && config.subagents.includes(agent)
          ? { decision: "allow", rule: "allowed", reason: `the variant's subagent ${agent}` }
          : deny(
              "not-in-setup",
              `${JSON.stringify(agent)} is not a subagent of the variant's setup (${config.subagents.join(", ")})`,
            );
      };
    return null;
  };
  const records: (PolicyDecisionRecord | undefined)[] = [];
  const uses: (ToolUse | undefined)[] = [];
  let physicalRoot: Promise<string> | undefined;
  let physicalReadable: Promise<string[]> | undefined;

  // The root's physical path is what targets are compared with (e.g. /private/tmp on macOS).
  const rootReal = () => {
    physicalRoot ??= fs.realpath(config.trialRoot).catch(() => config.trialRoot);
    return physicalRoot;
  };

  const readableReal = () => {
    physicalReadable ??= Promise.all(
      config.readableRoots.map((dir) => fs.realpath(dir).catch(() => dir)),
    );
    return physicalReadable;
  };

  async function confine(
    raw: unknown,
    fieldName: string,
    readOnly = false,
  ): Promise<
    { ok: true; absolutePath: string; relativePath: string } | { ok: false; verdict: Verdict }
  > {
    const problem = rawPathProblem(raw, fieldName);
    if (problem !== null) return { ok: false, verdict: deny("invalid-input", problem) };
    const path = raw as string;
    if (isHomeRelative(path)) {
      return {
        ok: false,
        verdict: deny(
          "path-outside-root",
          `${fieldName} ${path} refers to a home directory, outside the trial root`,
        ),
      };
    }
    const root = await rootReal();
    let physical: string;
    try {
      physical = await resolvePhysicalPath(absoluteFromRoot(config.trialRoot, path), fs);
    } catch (error) {
      const message = error instanceof PathResolutionError ? error.message : String(error);
      return {
        ok: false,
        verdict: deny("invalid-input", `${fieldName} cannot be resolved: ${message}`),
      };
    }
    const relativePath = relativeInside(root, physical);
    if (relativePath === null && readOnly) {
      // A read of the variant's setup (a skill's reference file): the path itself stands for it.
      for (const dir of await readableReal())
        if (relativeInside(dir, physical) !== null)
          return { ok: true, absolutePath: physical, relativePath: physical };
    }
    if (relativePath === null) {
      return {
        ok: false,
        verdict: deny(
          "path-outside-root",
          `${fieldName} resolves outside the trial root (symlinks followed); file tools are confined to the trial`,
        ),
      };
    }
    if (isGitPath(relativePath)) {
      return {
        ok: false,
        verdict: deny("git-dir", `${fieldName} is inside .git, which holds the harness's baseline`),
      };
    }
    return { ok: true, absolutePath: physical, relativePath };
  }

  async function judge(tool: CanonicalTool, input: unknown): Promise<Verdict> {
    const kind = TOOL_KINDS[tool];
    if (kind === "read" || kind === "write") {
      const name = field(input, "file_path") !== undefined ? "file_path" : "path";
      const target = await confine(field(input, name), name, kind === "read");
      if (!target.ok) return target.verdict;
      const found = { absolutePath: target.absolutePath, relativePath: target.relativePath };
      if (kind === "write" && !writable.has(target.relativePath)) {
        return {
          ...deny(
            "write-not-allowed",
            `${target.relativePath || "(the trial root)"} is not in the allowed change surface (${config.allowedWrites.join(", ") || "nothing"})`,
          ),
          target: found,
        };
      }
      return {
        decision: "allow",
        rule: "allowed",
        reason: `${tool} ${target.relativePath || "."} inside the trial root`,
        target: found,
      };
    }
    if (kind === "search") {
      const pattern = field(input, "pattern");
      if (typeof pattern !== "string" || pattern === "") {
        return deny("invalid-input", "`pattern` must be a non-empty string");
      }
      if (tool === "Glob" && globPatternEscapes(pattern)) {
        return deny(
          "path-outside-root",
          "glob pattern is absolute or climbs with `..`; patterns are relative to the search directory",
        );
      }
      const rawPath = field(input, "path");
      const target = await confine(rawPath ?? ".", "path", true);
      if (!target.ok) return target.verdict;
      return {
        decision: "allow",
        rule: "allowed",
        reason: `${tool} in ${target.relativePath || "."}`,
        target: { absolutePath: target.absolutePath, relativePath: target.relativePath },
      };
    }
    const command = field(input, "command");
    if (typeof command !== "string") return deny("invalid-input", "`command` must be a string");
    if (field(input, "run_in_background") === true) {
      return deny("background-not-allowed", "background commands could outlive the trial");
    }
    const check = checkCommand(command, config.allowedCommands, config.commandPrograms);
    if (!check.ok) return deny(check.rule, check.reason);
    return {
      decision: "allow",
      rule: "allowed",
      reason: "command is in the vocabulary",
      argv: check.argv,
    };
  }

  async function decide(toolName: string, input: unknown): Promise<PolicyDecision> {
    const seq = records.length + 1;
    // Reserve the slot now so concurrent calls keep call order in the log.
    records.push(undefined);
    uses.push(undefined);
    const tool = typeof toolName === "string" ? normalizeToolName(toolName) : null;
    let verdict: Verdict;
    if (tool === null && typeof toolName === "string" && mcpTools.has(toolName)) {
      verdict = {
        decision: "allow",
        rule: "allowed",
        reason: "an MCP tool the harness serves for this trial",
      };
    } else if (tool === null && typeof toolName === "string" && setupServerOf(toolName)) {
      verdict = {
        decision: "allow",
        rule: "allowed",
        reason: `a tool of the variant's MCP server ${setupServerOf(toolName)}`,
      };
    } else if (tool === null && typeof toolName === "string" && setupTool(toolName) !== null) {
      verdict = setupTool(toolName)!(input);
    } else if (tool === null) {
      verdict = deny(
        "unknown-tool",
        `${String(toolName)} is not a tool this policy can bound; it is denied`,
      );
    } else if (!visible.has(tool)) {
      verdict = deny(
        "tool-not-enabled",
        `${tool} is not among the trial's tools (${config.tools.join(", ") || "none"})`,
      );
    } else {
      verdict = await judge(tool, input);
    }
    const root = await rootReal();
    records[seq - 1] = {
      seq,
      tool: String(toolName),
      inputSummary: summarizeInput(tool, input, [config.trialRoot, root]),
      decision: verdict.decision,
      reason: replaceRootAliases(verdict.reason, [config.trialRoot, root]),
      rule: verdict.rule,
      atMs: Math.max(0, now() - startedAt),
    };
    uses[seq - 1] = {
      seq,
      decision: verdict.decision,
      ...describeToolUse(String(toolName), tool, input, [config.trialRoot, root]),
    };
    return { seq, tool, ...verdict };
  }

  return {
    config,
    decide,
    decisions: () =>
      records.filter((r): r is PolicyDecisionRecord => r !== undefined).map((r) => ({ ...r })),
    toolUse: () => uses.filter((u): u is ToolUse => u !== undefined).map((u) => ({ ...u })),
  };
}

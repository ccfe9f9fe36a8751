import { z } from "zod";

/** The plugin a setup's skills are loaded through; a host names each skill `<plugin>:<name>`. */
export const SETUP_SKILL_NAMESPACE = "harnesslab-setup";

/** Tool names the policy knows how to bound, spelled as Claude Code spells them. */
export const CANONICAL_TOOLS = [
  "Read",
  "Write",
  "Edit",
  "MultiEdit",
  "Glob",
  "Grep",
  "Bash",
] as const;
export type CanonicalTool = (typeof CANONICAL_TOOLS)[number];

/**
 * Stable codes naming the rule that produced a decision. Reports and tests key on these,
 * so they never change meaning; new rules get new codes.
 */
const POLICY_RULES = [
  "allowed",
  "unknown-tool",
  "tool-not-enabled",
  "invalid-input",
  "path-outside-root",
  "git-dir",
  "write-not-allowed",
  "shell-metacharacter",
  "command-not-allowed",
  "background-not-allowed",
  "not-in-setup",
] as const;
export type PolicyRule = (typeof POLICY_RULES)[number];

export const policyDecisionRecordSchema = z.strictObject({
  /** 1-based order of the call within the trial. */
  seq: z.number().int().min(1),
  /** The tool name exactly as the agent called it. */
  tool: z.string(),
  /** Short, secret-free description of the call; the trial path appears as `<trial-root>`. */
  inputSummary: z.string(),
  decision: z.enum(["allow", "deny"]),
  reason: z.string(),
  rule: z.enum(POLICY_RULES),
  /** Milliseconds since the policy was created (from the injected clock). */
  atMs: z.number().min(0),
});
export type PolicyDecisionRecord = z.infer<typeof policyDecisionRecordSchema>;

/** How a tool call is counted in a trial's tool-use transcript. */
export const TOOL_USE_KINDS = ["shell", "mcp", "other"] as const;

/** One tool call as the transcript keeps it: what kind of tool, and what it was asked to do. */
export const toolUseSchema = z.strictObject({
  seq: z.number().int().min(1),
  kind: z.enum(TOOL_USE_KINDS),
  /** The tool name exactly as the agent called it. */
  tool: z.string(),
  decision: z.enum(["allow", "deny"]),
  /** shell: the command (credentials masked, the trial path as `<trial-root>`, clipped). */
  command: z.string().optional(),
  /** mcp: the server and the tool on it. */
  server: z.string().optional(),
  mcpTool: z.string().optional(),
});
export type ToolUse = z.infer<typeof toolUseSchema>;

/** What `decide` returns: the record plus what the caller needs to carry out an allowed call. */
export interface PolicyDecision {
  seq: number;
  decision: "allow" | "deny";
  rule: PolicyRule;
  reason: string;
  /** The canonical tool name, or null for a tool the policy does not know. */
  tool: CanonicalTool | null;
  /**
   * For file tools, the physical path the decision is about (symlinks resolved), and the same
   * path relative to the trial root with `/` separators. Executors should operate on
   * `absolutePath`, not on the raw input, so that what was checked is what is touched.
   */
  target?: { absolutePath: string; relativePath: string };
  /** For Bash, the argv the command string tokenized to (present when allowed). */
  argv?: string[];
}

export interface ToolPolicyOptions {
  /** Absolute path of the trial's working copy. */
  trialRoot: string;
  /** Files Write/Edit may change, relative to the trial root, `/`-separated (the expected files). */
  allowedWrites: readonly string[];
  /** The Bash vocabulary: each entry is one exact argv, e.g. `["npm", "test"]`. */
  allowedCommands: readonly (readonly string[])[];
  /** Tool names visible to the agent; a known tool outside this list is denied. */
  tools: readonly string[];
  /**
   * MCP tools the agent may call, by the exact name the host gives them (`mcp__forge__get_issue`):
   * the harness's own servers, which bound their arguments themselves. Every other MCP tool stays
   * unknown and denied.
   */
  mcpTools?: readonly string[];
  /**
   * MCP servers of the variant's own setup (`mcp__<server>__<any tool>`): the experimenter's
   * servers, run in the trial's sandbox, every call of theirs still decided and recorded here.
   * A tool of a server the variant does not have stays unknown and denied.
   */
  mcpServers?: readonly string[];
  /**
   * Skills of the variant's setup the host's `Skill` tool may load, by name (also as
   * `harnesslab-setup:<name>`, the plugin they are loaded through). Any other skill is denied.
   */
  skills?: readonly string[];
  /** Subagents of the variant's setup the host's `Agent` (`Task`) tool may start, by name. */
  subagents?: readonly string[];
  /**
   * Folders outside the trial that file reads and searches may reach (the materialized setup's
   * skills); never writes.
   */
  readableRoots?: readonly string[];
  /**
   * Programs whose commands are allowed with any arguments (plain words and quoted strings, no
   * other shell syntax): a forge task's CLI tools (`curl`, `tea`), whose reach the sandbox bounds.
   */
  commandPrograms?: readonly string[];
  /** Clock for `atMs`; defaults to `Date.now`. */
  now?: () => number;
  /** Filesystem seam used to resolve symlinks; defaults to `node:fs/promises`. */
  resolver?: PathResolverFs;
}

/** The two filesystem reads path confinement needs; injectable so the rules can be tested alone. */
export interface PathResolverFs {
  realpath(path: string): Promise<string>;
  readlink(path: string): Promise<string>;
}

export interface ToolPolicy {
  /** The settings the policy enforces (normalized), for preambles and receipts. */
  readonly config: {
    trialRoot: string;
    allowedWrites: string[];
    allowedCommands: string[][];
    tools: CanonicalTool[];
    mcpTools: string[];
    mcpServers: string[];
    commandPrograms: string[];
    skills: string[];
    subagents: string[];
    readableRoots: string[];
  };
  /** Decides one tool call and records the decision. Never throws for bad input. */
  decide(toolName: string, input: unknown): Promise<PolicyDecision>;
  /** Every decision so far, in call order. */
  decisions(): PolicyDecisionRecord[];
  /** Every call so far by kind (shell, mcp, other), in call order. */
  toolUse(): ToolUse[];
}

import { CANONICAL_TOOLS, type CanonicalTool } from "./types.js";

/** How a tool touches the workspace; each kind has its own rule set. */
export type ToolKind = "read" | "write" | "search" | "command";

export const TOOL_KINDS: Readonly<Record<CanonicalTool, ToolKind>> = {
  Read: "read",
  Write: "write",
  Edit: "write",
  MultiEdit: "write",
  Glob: "search",
  Grep: "search",
  Bash: "command",
};

const BY_ALIAS = new Map<string, CanonicalTool>(
  CANONICAL_TOOLS.flatMap((name) => [
    [name, name],
    // The scripted host calls its tools in lower case (`read`, `multiedit`).
    [name.toLowerCase(), name],
  ]),
);

/**
 * The canonical name of a tool the policy can bound, or null. Only the Claude Code spelling and
 * its all-lowercase alias are accepted: a near miss such as `READ` or `bash ` is an unknown tool,
 * because guessing would let an unexpected tool borrow a known tool's rules.
 */
export function normalizeToolName(name: string): CanonicalTool | null {
  return BY_ALIAS.get(name) ?? null;
}

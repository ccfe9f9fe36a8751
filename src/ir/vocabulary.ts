// The closed vocabularies of `.harness` v0.1/v0.2 and IR 0.1.0/0.2.0, shared by the compiler, the
// resolver and the hosts.

/** The IR a v0.1 program compiles to: every document of it is byte for byte what it always was. */
export const IR_VERSION = "0.1.0";
/** The IR a program that uses a v0.2 clause (source, mcp, hook, tools, a v0.2 kind) compiles to. */
export const IR_VERSION_V2 = "0.2.0";
export const IR_VERSIONS = [IR_VERSION, IR_VERSION_V2] as const;
export type IrVersion = (typeof IR_VERSIONS)[number];

export const COMPONENT_KINDS = [
  "skill",
  "tool",
  "program",
  "workflow",
  "hook",
  "policy",
  "observer",
  "ui",
] as const;
/**
 * v0.2 adds `instructions` (a Markdown file the host reads as instructions: CLAUDE.md,
 * AGENTS.md, an appended system prompt) and `subagent` (an agent the host can hand work to: a
 * description, a prompt file, its tools).
 */
export const COMPONENT_KINDS_V2 = [...COMPONENT_KINDS, "instructions", "subagent"] as const;
export type ComponentKind = (typeof COMPONENT_KINDS_V2)[number];

/** The host events a `hook` component may run on (Claude Code's names, which others map to). */
export const HOOK_EVENTS = [
  "PreToolUse",
  "PostToolUse",
  "UserPromptSubmit",
  "Stop",
  "SubagentStop",
  "SessionStart",
  "SessionEnd",
  "Notification",
  "PreCompact",
] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

export const PERMISSION_DOMAINS = ["workspace", "process", "network", "model"] as const;
export type PermissionDomain = (typeof PERMISSION_DOMAINS)[number];

export const PERMISSION_ACCESSES = ["read", "write", "allow", "deny"] as const;
export type PermissionAccess = (typeof PERMISSION_ACCESSES)[number];

/** Binding strengths, weakest first: the array index is the order used by every comparison. */
export const STRENGTHS = ["unsupported", "advisory", "wired", "enforced"] as const;
export type Strength = (typeof STRENGTHS)[number];

export const DEGRADATION_POLICIES = ["fail", "report"] as const;
export type DegradationPolicy = (typeof DEGRADATION_POLICIES)[number];

export const DURATION_UNITS_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;
export type DurationUnit = keyof typeof DURATION_UNITS_MS;

const STRENGTH_RANK: Record<Strength, number> = {
  unsupported: 0,
  advisory: 1,
  wired: 2,
  enforced: 3,
};

/** Negative when `a` is weaker than `b`, zero when equal, positive when stronger. */
export function compareStrength(a: Strength, b: Strength): number {
  return STRENGTH_RANK[a] - STRENGTH_RANK[b];
}

export function weakerStrength(a: Strength, b: Strength): Strength {
  return compareStrength(a, b) <= 0 ? a : b;
}

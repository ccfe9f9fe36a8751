// A variant's setup as an executor receives it (the components it hands to its host itself, their
// files already materialized outside the trial), and what the host reported of each.
import { z } from "zod";
import { SETUP_MECHANISMS, type SetupMechanism } from "../../hosts/index.js";
import type { ComponentKind, HookEvent, Strength } from "../../ir/index.js";
import type { GrantedEndpoint } from "../../sandbox/index.js";

/** A source file as materialized: its path inside the source and its content hash. */
interface SetupFile {
  /** Relative to the source folder (or the file's own name), `/`-separated. */
  path: string;
  sha256: string;
}

/**
 * One component the executor hands to its host. Its source, when it has one, is a read-only copy
 * outside the trial root (no tool of the agent's may write it, and it never appears in the patch).
 */
export interface SetupComponent {
  id: string;
  kind: ComponentKind;
  mechanism: SetupMechanism;
  /** The strength the resolution planned (`wired`): what the host's report must confirm. */
  strength: Strength;
  /** What a failure to load does: `fail` ends the trial as `setup_failed`, `report` records it. */
  onDegrade: "fail" | "report";
  description?: string;
  source?: {
    /** Absolute: the materialized folder, or the materialized file. */
    path: string;
    type: "file" | "directory";
    files: SetupFile[];
    /** A skill's SKILL.md front matter. */
    skill?: { name: string; description: string };
  };
  /** A stdio MCP server, `${source}` already replaced by the source's path. */
  mcp?: { command: string; args: string[]; env: Record<string, string> };
  /**
   * A forge task's gateway, granted to this MCP server's sandbox when it is the agent's forge
   * tool (reached at the URL its `${forge.url}` was filled with).
   */
  forgeGrant?: GrantedEndpoint;
  /** A hook's event and command, `${source}` already replaced. */
  hook?: { event: HookEvent; command: string[] };
  /** A subagent's tools. */
  tools?: string[];
}

/** One run of a hook's command, as the host recorded it. */
const hookRunSchema = z.strictObject({
  event: z.string(),
  exitCode: z.int().nullable(),
  /** Exit 2 at an event that can be blocked (PreToolUse, UserPromptSubmit, Stop). */
  blocked: z.boolean(),
  durationMs: z.number().min(0),
  /** The last part of its output (a hook's feedback to the agent). */
  stdout: z.string(),
  stderr: z.string(),
  /** Why it could not run (its program missing, the trial ended). */
  error: z.string().optional(),
});
export type HookRun = z.infer<typeof hookRunSchema>;

/** What the host reported of one setup component. */
export const hostSetupReportSchema = z.strictObject({
  component: z.string(),
  mechanism: z.enum(SETUP_MECHANISMS),
  /**
   * `loaded`: the host confirmed it (listed the skill, connected the MCP server, …); `failed`: the
   * host reported it could not load it (`reason` says why); `unconfirmed`: the host said nothing
   * about it, so it counts as not loaded.
   */
  status: z.enum(["loaded", "failed", "unconfirmed"]),
  reason: z.string().optional(),
  /** The name the host lists it under, when it differs from the component's id. */
  hostName: z.string().optional(),
  /** An MCP server's tools as the host saw them, as the agent calls them (`mcp__<server>__<tool>`). */
  tools: z.array(z.string()).optional(),
  /** A hook's runs (the first 100). */
  hookRuns: z.array(hookRunSchema).optional(),
  /** How many times the hook ran in all. */
  hookRunCount: z.int().min(0).optional(),
});
export type HostSetupReport = z.infer<typeof hostSetupReportSchema>;

/** `mcp__<server>__<tool>`: the name an agent calls an MCP server's tool by. */
export function mcpToolName(server: string, tool: string): string {
  return `mcp__${server}__${tool}`;
}

/** The error of a trial whose setup did not load: each fatal component and the host's reason. */
export function setupFailure(fatal: readonly HostSetupReport[]): string {
  return `the variant's setup did not load: ${fatal.map((r) => `${r.component} (${r.mechanism}): ${r.reason ?? r.status}`).join("; ")}`;
}

// What each variant's setup really materialized, as both reports show it: per component, in how
// many trials the host confirmed it, and how often the agent called its tools.
import type { VerdictDocument } from "../artifacts/index.js";

export const SETUP_HEADERS = [
  "variant",
  "component",
  "mechanism",
  "loaded",
  "failed or unconfirmed",
  "tool calls",
] as const;

export interface SetupRow {
  variant: string;
  component: string;
  mechanism: string;
  loaded: string;
  /** Trials where the host reported a failure or said nothing; empty when there were none. */
  missing: string;
  toolCalls: string;
  /** True when some trial's host did not confirm the component. */
  short: boolean;
}

/** One row per component of each variant's setup; empty when no variant has one. */
export function setupRows(verdict: VerdictDocument): SetupRow[] {
  const rows: SetupRow[] = [];
  for (const variant of verdict.variants)
    for (const entry of variant.setup ?? []) {
      const ran = entry.loaded + entry.failed + entry.unconfirmed;
      const parts = [
        entry.failed > 0 ? `failed in ${entry.failed}` : "",
        entry.unconfirmed > 0 ? `unconfirmed in ${entry.unconfirmed}` : "",
      ].filter((p) => p !== "");
      rows.push({
        variant: variant.id,
        component: entry.component,
        mechanism: entry.mechanism,
        loaded: `${entry.loaded} of ${ran} trials${entry.notRun > 0 ? ` (${entry.notRun} never started)` : ""}`,
        missing: parts.join(", "),
        toolCalls: entry.mechanism === "mcp-server" ? String(entry.toolCalls) : "",
        short: entry.loaded < ran,
      });
    }
  return rows;
}

export const SETUP_NOTE =
  "What the host itself reported it loaded in each trial (setup.json in each trial's folder has the files, their hashes and the host's own words); tool calls count the agent's allowed calls of an MCP server's tools.";

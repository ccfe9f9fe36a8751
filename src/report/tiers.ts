// Per-tier results (pure): pass rates with their Wilson intervals, cost-equivalent tokens and
// tool calls by kind, for each tier the manifest grouped its tasks in, per variant. Computed
// from verdict.json alone, so verdict.md, verdict.html and the terminal say the same.
import type { VerdictDocument } from "../artifacts/index.js";
import { wilsonInterval } from "../stats/index.js";
import { num, percent, rateInterval } from "./format.js";

export interface TierRow {
  tier: string;
  variant: string;
  isBaseline: boolean;
  /** How the variant's agent reached the forge (`tool widgets-mcp (MCP server), only`); "—" without one. */
  arm: string;
  /** Tasks in the tier. */
  tasks: number;
  passed: number;
  /** Trials that were not infrastructure errors. */
  completed: number;
  infraErrors: number;
  passRate: number | null;
  interval: { lower: number; upper: number } | null;
  /** Means per completed trial; null when no trial reported it. */
  meanTurns: number | null;
  meanCostEquivalentTokens: number | null;
  meanToolUse: { shell: number; mcp: number; other: number } | null;
}

function mean(values: readonly number[]): number | null {
  return values.length === 0 ? null : values.reduce((a, b) => a + b, 0) / values.length;
}

/** A variant's forge arm in a few words, as the tier table names it. */
function armText(variant: VerdictDocument["variants"][number]): string {
  const way =
    variant.forgeTool !== undefined
      ? `tool ${variant.forgeTool.component} (${variant.forgeTool.kind === "cli" ? "program" : "MCP server"})`
      : variant.forgeAccess === "cli"
        ? `cli (${(variant.forgeCommands ?? []).join(", ")})`
        : variant.forgeAccess === "mcp"
          ? "harnesslab MCP server"
          : undefined;
  if (way === undefined) return "—";
  return variant.forgeOnly ? `${way}, only` : way;
}

/** One row per tier × variant, tiers in the order their first task appears; empty without tiers. */
export function tierRows(verdict: VerdictDocument): TierRow[] {
  const tiers = verdict.taskTiers;
  if (tiers === undefined) return [];
  const order = [
    ...new Set(verdict.tasks.map((task) => tiers[task]).filter((t) => t !== undefined)),
  ];
  const rows: TierRow[] = [];
  for (const tier of order) {
    const tasks = verdict.tasks.filter((task) => tiers[task] === tier);
    for (const variant of verdict.variants) {
      const trials = verdict.trials.filter(
        (t) => t.variant === variant.id && tasks.includes(t.task),
      );
      const completed = trials.filter((t) => t.outcome !== "infrastructure_error");
      const passed = completed.filter((t) => t.outcome === "passed").length;
      const interval = completed.length === 0 ? null : wilsonInterval(passed, completed.length);
      const uses = completed.flatMap((t) => (t.toolUse === null ? [] : [t.toolUse]));
      rows.push({
        tier,
        variant: variant.id,
        isBaseline: variant.isBaseline,
        arm: armText(variant),
        tasks: tasks.length,
        passed,
        completed: completed.length,
        infraErrors: trials.length - completed.length,
        passRate: completed.length === 0 ? null : passed / completed.length,
        interval: interval === null ? null : { lower: interval.lower, upper: interval.upper },
        meanTurns: mean(completed.flatMap((t) => (t.turns === null ? [] : [t.turns]))),
        meanCostEquivalentTokens: mean(
          completed.flatMap((t) =>
            t.costEquivalentTokens === null ? [] : [t.costEquivalentTokens],
          ),
        ),
        meanToolUse:
          uses.length === 0
            ? null
            : {
                shell: mean(uses.map((u) => u.shell)) ?? 0,
                mcp: mean(uses.map((u) => u.mcp)) ?? 0,
                other: mean(uses.map((u) => u.other)) ?? 0,
              },
      });
    }
  }
  return rows;
}

export const TIER_HEADERS = [
  "tier",
  "variant",
  "arm",
  "tasks",
  "passed / completed",
  "pass rate [95% CI]",
  "turns",
  "cost-equivalent tokens",
  "tool calls: shell · mcp · other",
] as const;

/** The row's cells as text (each renderer escapes them its own way), after tier and variant. */
export function tierCells(row: TierRow): string[] {
  return [
    row.arm,
    String(row.tasks),
    `${row.passed} / ${row.completed}${row.infraErrors > 0 ? ` (${row.infraErrors} infra)` : ""}`,
    `${percent(row.passRate)} ${rateInterval(row.interval)}`,
    row.meanTurns === null ? "—" : num(row.meanTurns),
    row.meanCostEquivalentTokens === null ? "—" : num(row.meanCostEquivalentTokens, 0),
    row.meanToolUse === null
      ? "—"
      : `${num(row.meanToolUse.shell)} · ${num(row.meanToolUse.mcp)} · ${num(row.meanToolUse.other)}`,
  ];
}

/** One line per tier for the terminal: `read: mcp 4/4 100% [51%–100%] · http 4/4 …`. */
export function tierLines(verdict: VerdictDocument): string[] {
  const rows = tierRows(verdict);
  const tiers = [...new Set(rows.map((r) => r.tier))];
  return tiers.map(
    (tier) =>
      `${tier}: ${rows
        .filter((r) => r.tier === tier)
        .map(
          (r) =>
            `${r.variant} ${r.passed}/${r.completed} ${percent(r.passRate)} ${rateInterval(r.interval)}`,
        )
        .join(" · ")}`,
  );
}

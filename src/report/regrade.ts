// The lines that say what a regrade changed, in the verdict's reports and in what `compare
// regrade` prints.
import type { RegradeSummary } from "../artifacts/index.js";

const rate = (value: number | null) => (value === null ? "—" : value.toFixed(2));
const score = (value: number | null) => (value === null ? "—" : String(value));

/**
 * `2 trials changed: 1 up, 1 down; baseline pass rate 0.60 → 0.40`, or `no trial changed`.
 * `other` changes are counted only when there are some.
 */
export function formatChangeLine(summary: RegradeSummary): string {
  const n = summary.changes.length;
  if (n === 0) return "no trial changed";
  const counts = [`${summary.up} up`, `${summary.down} down`];
  if (summary.other > 0) counts.push(`${summary.other} other`);
  const rates =
    summary.passRates.length === 0
      ? ["no pass rate changed"]
      : summary.passRates.map((r) => `${r.variant} pass rate ${rate(r.before)} → ${rate(r.after)}`);
  return `${n} trial${n === 1 ? "" : "s"} changed: ${counts.join(", ")}; ${rates.join("; ")}`;
}

/** One line per changed trial: `  <folder>: passed (100) → failed (90)`, with why when it became an infrastructure error. */
export function formatTrialChanges(summary: RegradeSummary): string[] {
  return summary.changes.map((c) => {
    const why = c.after.outcome === "infrastructure_error" ? ` — ${c.after.explanation}` : "";
    return `  ${c.artifactDir}: ${c.before.outcome} (${score(c.before.score)}) → ${c.after.outcome} (${score(c.after.score)})${why}`;
  });
}

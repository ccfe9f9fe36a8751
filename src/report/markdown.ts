import type { VerdictDocument } from "../compare/artifacts-contract.js";
import { cell, duration, levelPercent, num, percent, signedPoints, usd } from "./format.js";

const STATUS_LABEL: Record<VerdictDocument["status"], string> = {
  accept: "ACCEPT",
  reject: "REJECT",
  need_more_work: "NEED MORE WORK",
  infrastructure_error: "INFRASTRUCTURE ERROR",
};

/** verdict.md: the decision, why, per-variant results, the comparison statistics and every trial. */
export function renderMarkdownReport(verdict: VerdictDocument): string {
  const lines: string[] = [];
  const stats = verdict.statistics;
  lines.push(`# Verdict: ${STATUS_LABEL[verdict.status]}`, "", verdict.reason, "");
  lines.push(
    `Host \`${verdict.host}\` · baseline \`${verdict.baseline}\` · ${verdict.tasks.length} task(s) · ${verdict.trialsPerCell} trial(s) per variant and task · policy \`${stats?.policy.kind ?? "—"}\``,
    "",
  );
  if (!verdict.fixturesUnchanged)
    lines.push("> **A source fixture changed during the run; no verdict is given.**", "");

  lines.push("## Variants", "");
  lines.push(
    "| variant | composition | revision | passed / completed | pass rate (infra excluded) | pass rate (infra = fail) | mean score | infra errors | mean cost | mean duration |",
  );
  lines.push("|---|---|---|---|---|---|---|---|---|---|");
  for (const variant of verdict.variants) {
    const agg = stats?.aggregates.variants.find((v) => v.variant === variant.id);
    lines.push(
      `| ${cell(variant.id)}${variant.isBaseline ? " (baseline)" : ""} | ${cell(variant.composition)} | \`${variant.revisionId}\` | ${agg ? `${agg.passed} / ${agg.completed}` : "—"} | ${percent(agg?.passRate.excludingInfra)} | ${percent(agg?.passRate.infraAsFailure)} | ${num(agg?.meanScore)} | ${agg?.infraErrors ?? "—"} | ${usd(agg?.costUsd?.meanPerCompletedTrial)} | ${duration(agg?.duration?.meanMs)} |`,
    );
  }
  const degraded = verdict.variants.filter((v) => v.degraded.length > 0);
  if (degraded.length > 0) {
    lines.push("");
    for (const v of degraded)
      lines.push(
        `- \`${v.id}\`: degraded components ${v.degraded.map((d) => `\`${d}\``).join(", ")}`,
      );
  }

  if (stats && stats.comparisons.length > 0) {
    lines.push("", "## Comparisons with the baseline", "");
    lines.push(
      "| variant | status | difference | interval | exact p | mean score | cost ratio | flipped tasks |",
    );
    lines.push("|---|---|---|---|---|---|---|---|");
    for (const c of stats.comparisons) {
      const interval = c.interval
        ? `${signedPoints(c.interval.lower)} to ${signedPoints(c.interval.upper)} (${levelPercent(c.interval.level)}%, ${c.interval.method})`
        : "—";
      lines.push(
        `| ${cell(c.variant)} | ${c.status} | ${signedPoints(c.difference)} | ${cell(interval)} | ${num(c.exactPValue, 3)} | ${num(c.meanScore.variant)} vs ${num(c.meanScore.baseline)} | ${num(c.costRatio.usd, 2)} | ${c.flippedTasks.length > 0 ? c.flippedTasks.map((f) => cell(f.task)).join(", ") : "none"} |`,
      );
    }
    lines.push("");
    for (const c of stats.comparisons) lines.push(`- **${c.variant}**: ${c.reason}`);
  }

  if (verdict.tasks.length > 1 && stats) {
    lines.push("", "## Per task", "");
    lines.push("| task | variant | passed / completed | infra errors | mean score |");
    lines.push("|---|---|---|---|---|");
    for (const c of stats.aggregates.cells) {
      lines.push(
        `| ${cell(c.task)} | ${cell(c.variant)} | ${c.passed} / ${c.completed} | ${c.infraErrors} | ${num(c.meanScore)} |`,
      );
    }
  }

  lines.push("", "## Trials", "");
  lines.push("| # | task | variant | trial | outcome | score | explanation | evidence |");
  lines.push("|---|---|---|---|---|---|---|---|");
  for (const t of verdict.trials) {
    lines.push(
      `| ${t.seq} | ${cell(t.task)} | ${cell(t.variant)} | ${t.trial} | ${t.outcome}${t.infraReason ? ` (${t.infraReason})` : ""} | ${num(t.score)} | ${cell(t.explanation)} | [${t.artifactDir}](${t.artifactDir}/) |`,
    );
  }
  lines.push(
    "",
    "## Evidence",
    "",
    `- manifest \`${verdict.evidence.manifestHash}\``,
    `- harness \`${verdict.evidence.harnessHash}\``,
    ...Object.entries(verdict.evidence.fixtureHashes).map(
      ([task, hash]) => `- fixture of \`${task}\` \`${hash}\``,
    ),
    `- fixtures unchanged after the run: ${verdict.fixturesUnchanged ? "yes" : "**no**"}`,
    `- started ${verdict.startedAt}, finished ${verdict.finishedAt}${verdict.regradeOf ? `; re-grade of \`${verdict.regradeOf}\`` : ""}`,
    "",
    "One task is not proof of a general improvement, and agents are nondeterministic: read the interval, not just the status.",
    "",
  );
  return lines.join("\n");
}

/** The four-line terminal summary: status and reason; each variant's passed/completed and score; where the evidence is. */
export function renderTerminalSummary(verdict: VerdictDocument, outDir: string): string {
  const stats = verdict.statistics;
  const variants = verdict.variants
    .map((variant) => {
      const agg = stats?.aggregates.variants.find((v) => v.variant === variant.id);
      const infra = agg && agg.infraErrors > 0 ? `, ${agg.infraErrors} infra` : "";
      return `${variant.id}${variant.isBaseline ? " (baseline)" : ""} ${agg ? `${agg.passed}/${agg.completed}` : "0/0"} passed${infra}, score ${num(agg?.meanScore)}`;
    })
    .join("; ");
  const best = stats?.comparisons.find((c) => c.variant === stats.best) ?? stats?.comparisons[0];
  const interval = best?.interval
    ? `${best.variant} − ${verdict.baseline}: ${signedPoints(best.difference)} (${levelPercent(best.interval.level)}% CI ${signedPoints(best.interval.lower)} to ${signedPoints(best.interval.upper)})`
    : "no interval (not enough completed trials)";
  return [
    `verdict: ${verdict.status} — ${verdict.reason}`,
    `variants: ${variants}`,
    `difference: ${interval}`,
    `evidence: ${outDir}/verdict.md (also verdict.json, verdict.html, per-trial folders)`,
  ].join("\n");
}

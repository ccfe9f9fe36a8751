import type { VerdictDocument, VerdictTrial } from "../compare/artifacts-contract.js";
import {
  cell,
  duration,
  levelPercent,
  num,
  percent,
  signedPoints,
  statusLabel,
  trialTokens,
  usd,
} from "./format.js";
import {
  MEASURE_HEADERS,
  type MeasureTexts,
  measureTexts,
  passAtKColumns,
  passAtKText,
} from "./measures.js";

const MEASURE_COLUMNS = [
  MEASURE_HEADERS.passedOfCompleted,
  MEASURE_HEADERS.passRate,
  MEASURE_HEADERS.infraErrors,
  MEASURE_HEADERS.meanScore,
  MEASURE_HEADERS.passAt1,
  MEASURE_HEADERS.passAtLargestK,
  MEASURE_HEADERS.meanCost,
  MEASURE_HEADERS.tokens,
  MEASURE_HEADERS.turns,
  MEASURE_HEADERS.duration,
];

function measureRow(m: MeasureTexts): string[] {
  const rate = `${m.passRate} ${m.interval}${m.infraAsFailure === null ? "" : ` (${m.infraAsFailure} with infra errors as failures)`}`;
  return [
    m.passedOfCompleted,
    rate,
    m.infraErrors,
    m.meanScore,
    m.passAt1,
    m.passAtLargestK,
    m.meanCost,
    m.tokens,
    m.turns,
    m.duration,
  ];
}

function table(headers: readonly string[], rows: readonly (readonly string[])[]): string[] {
  return [
    `| ${headers.join(" | ")} |`,
    `|${headers.map(() => "---").join("|")}|`,
    ...rows.map((row) => `| ${row.map(cell).join(" | ")} |`),
  ];
}

/** A relative link to a folder of the run; spaces and parentheses would end a Markdown link. */
function link(linkBase: string, path: string): string {
  const target = `${linkBase}${path}`
    .split("/")
    .map((segment) => encodeURIComponent(segment))
    .join("/");
  return `[${path.replace(/[[\]]/g, "\\$&")}](${target}/)`;
}

function byReadingOrder(verdict: VerdictDocument): VerdictTrial[] {
  const taskIndex = new Map(verdict.tasks.map((t, i) => [t, i]));
  const variantIndex = new Map(verdict.variants.map((v, i) => [v.id, i]));
  return [...verdict.trials].sort(
    (a, b) =>
      (taskIndex.get(a.task) ?? 0) - (taskIndex.get(b.task) ?? 0) ||
      (variantIndex.get(a.variant) ?? 0) - (variantIndex.get(b.variant) ?? 0) ||
      a.trial - b.trial ||
      a.seq - b.seq,
  );
}

export interface MarkdownReportOptions {
  /** Prefix for links to trial folders, ending in `/`, when the file is not in the run's folder. */
  linkBase?: string;
}

/**
 * verdict.md: the decision and why, per-variant and per-task results with intervals and pass@k,
 * the comparisons, the tasks that flipped, infrastructure retries and every trial.
 */
export function renderMarkdownReport(
  verdict: VerdictDocument,
  options: MarkdownReportOptions = {},
): string {
  const linkBase = options.linkBase ?? "";
  const lines: string[] = [];
  const stats = verdict.statistics;
  lines.push(`# Verdict: ${statusLabel(verdict.status)}`, "", verdict.reason, "");
  if (verdict.regradeOf) lines.push(`Re-grade of \`${verdict.regradeOf}\`.`, "");
  lines.push(
    `Host \`${verdict.host}\` · baseline \`${verdict.baseline}\` · ${verdict.tasks.length} task(s) · ${verdict.trialsPerCell} trial(s) per variant and task · policy \`${stats?.policy.kind ?? "—"}\``,
    "",
  );
  if (!verdict.fixturesUnchanged)
    lines.push("> **A source fixture changed during the run; no verdict is given.**", "");

  lines.push("## Variants", "");
  const variantAggs = stats?.aggregates.variants ?? [];
  lines.push(
    ...table(
      ["variant", "composition", "revision", ...MEASURE_COLUMNS],
      verdict.variants.map((variant) => [
        `${variant.id}${variant.isBaseline ? " (baseline)" : ""}`,
        variant.composition,
        `\`${variant.revisionId}\``,
        ...measureRow(measureTexts(variantAggs.find((v) => v.variant === variant.id))),
      ]),
    ),
  );
  lines.push(
    "",
    "Pass rates count completed trials (infrastructure errors left out), with a 95% Wilson interval in brackets. pass@k: at least one of k trials passes; pass^k: all k pass. Cost, tokens (input includes cache), turns and duration are means per completed trial.",
  );
  const degraded = verdict.variants.filter((v) => v.degraded.length > 0);
  if (degraded.length > 0) {
    lines.push("");
    for (const v of degraded)
      lines.push(
        `- \`${v.id}\`: degraded components ${v.degraded.map((d) => `\`${d}\``).join(", ")}`,
      );
  }
  const ks = passAtKColumns(variantAggs);
  if (ks.length > 2) {
    lines.push("", "### pass@k · pass^k", "");
    lines.push(
      ...table(
        ["variant", ...ks.map((k) => `k = ${k}`)],
        verdict.variants.map((v) => [
          v.id,
          ...ks.map((k) =>
            passAtKText(
              variantAggs.find((a) => a.variant === v.id),
              k,
            ),
          ),
        ]),
      ),
    );
  }

  if (stats && stats.comparisons.length > 0) {
    lines.push("", "## Comparisons with the baseline", "");
    lines.push(
      ...table(
        [
          "variant",
          "status",
          "difference",
          "interval",
          "exact p",
          "mean score",
          "mean cost",
          "cost ratio",
          "flipped tasks",
        ],
        stats.comparisons.map((c) => [
          c.variant,
          c.status,
          signedPoints(c.difference),
          c.interval
            ? `${signedPoints(c.interval.lower)} to ${signedPoints(c.interval.upper)} (${levelPercent(c.interval.level)}%, ${c.interval.method})`
            : "—",
          num(c.exactPValue, 3),
          `${num(c.meanScore.variant)} vs ${num(c.meanScore.baseline)}`,
          `${usd(c.meanCostUsd.variant)} vs ${usd(c.meanCostUsd.baseline)}`,
          c.costRatio.usd === null ? "—" : `${num(c.costRatio.usd, 2)}×`,
          c.flippedTasks.length > 0 ? c.flippedTasks.map((f) => f.task).join(", ") : "none",
        ]),
      ),
    );
    lines.push("");
    for (const c of stats.comparisons) lines.push(`- **${c.variant}**: ${c.reason}`);

    lines.push("", "## Tasks that flipped", "");
    const flips = stats.comparisons.flatMap((c) => c.flippedTasks.map((f) => ({ c, f })));
    if (flips.length === 0) {
      lines.push(
        "No task flipped: on every task each variant's majority outcome is the same as the baseline's.",
      );
    } else {
      lines.push(
        ...table(
          ["variant", "task", "direction", "baseline pass rate", "variant pass rate"],
          flips.map(({ c, f }) => [
            c.variant,
            f.task,
            f.direction === "improved" ? "improved (fail → pass)" : "regressed (pass → fail)",
            percent(f.baselinePassRate),
            percent(f.variantPassRate),
          ]),
        ),
      );
    }
  }

  if (stats) {
    lines.push("", "## Per task", "");
    const rows: string[][] = [];
    for (const task of verdict.tasks)
      for (const variant of verdict.variants)
        rows.push([
          task,
          `${variant.id}${variant.isBaseline ? " (baseline)" : ""}`,
          ...measureRow(
            measureTexts(
              stats.aggregates.cells.find((c) => c.task === task && c.variant === variant.id),
            ),
          ),
        ]);
    lines.push(...table(["task", "variant", ...MEASURE_COLUMNS], rows));
  }

  const trials = byReadingOrder(verdict);
  const retries = verdict.infraRetries;
  if (retries.trialsRetried > 0) {
    lines.push("", "## Infrastructure retries", "");
    lines.push(
      `${retries.trialsRetried} trial(s) were retried after infrastructure errors (up to ${retries.limit} retries each): ${retries.extraAttempts} extra attempt(s), ${retries.recovered} recovered${retries.extraCostUsd === null ? "" : `, ${usd(retries.extraCostUsd)} spent on retried attempts`}. The statistics count each trial's last attempt only.`,
      "",
    );
    const rows: string[][] = [];
    for (const t of trials)
      for (const a of t.retriedAttempts)
        rows.push([
          `#${t.seq} ${t.task} · ${t.variant} · trial ${t.trial}`,
          String(a.attempt),
          a.infraReason ?? "—",
          a.explanation,
          duration(a.durationMs),
          link(linkBase, `${t.artifactDir}/${a.dir}`),
        ]);
    lines.push(
      ...table(["trial", "attempt", "infra reason", "explanation", "duration", "folder"], rows),
    );
  } else if (retries.limit > 0) {
    lines.push(
      "",
      "## Infrastructure retries",
      "",
      `Trials could be re-run up to ${retries.limit} time(s) after an infrastructure error; none needed it.`,
    );
  }

  lines.push("", "## Trials", "");
  lines.push(
    ...table(
      [
        "#",
        "task",
        "variant",
        "trial",
        "outcome",
        "score",
        "explanation",
        "turns",
        "tokens in / out",
        "cost",
        "evidence",
      ],
      trials.map((t) => [
        String(t.seq),
        t.task,
        t.variant,
        `${t.trial}${t.retriedAttempts.length > 0 ? ` (${t.retriedAttempts.length + 1} attempts)` : ""}`,
        `${t.outcome}${t.infraReason ? ` (${t.infraReason})` : ""}`,
        num(t.score),
        t.explanation,
        t.turns === null ? "—" : String(t.turns),
        trialTokens(t.tokens),
        usd(t.costUsd),
        link(linkBase, t.artifactDir),
      ]),
    ),
  );
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
  const retries = verdict.infraRetries;
  const retried =
    retries.trialsRetried > 0
      ? `; ${retries.trialsRetried} trial(s) retried after infrastructure errors (${retries.extraAttempts} extra attempt(s), ${retries.recovered} recovered)`
      : "";
  const best = stats?.comparisons.find((c) => c.variant === stats.best) ?? stats?.comparisons[0];
  const interval = best?.interval
    ? `${best.variant} − ${verdict.baseline}: ${signedPoints(best.difference)} (${levelPercent(best.interval.level)}% CI ${signedPoints(best.interval.lower)} to ${signedPoints(best.interval.upper)})`
    : "no interval (not enough completed trials)";
  return [
    `verdict: ${verdict.status} — ${verdict.reason}`,
    `variants: ${variants}${retried}`,
    `difference: ${interval}`,
    `evidence: ${outDir}/verdict.md (also verdict.json, verdict.html, per-trial folders)`,
  ].join("\n");
}

import type { VerdictDocument } from "../artifacts/index.js";
import {
  comparisonCostTexts,
  costBasisNote,
  hostModelText,
  runHosts,
  SPEND_HEADERS,
  spendRows,
} from "./cost.js";
import {
  duration,
  levelPercent,
  num,
  percent,
  readingOrder,
  signedPoints,
  statusLabel,
  trialTokens,
  usd,
} from "./format.js";
import { mdCell, mdCode, mdText } from "./markdown-text.js";
import {
  MEASURE_HEADERS,
  type MeasureTexts,
  measureTexts,
  passAtKColumns,
  passAtKText,
} from "./measures.js";
import { formatChangeLine } from "./regrade.js";
import {
  interruptedNote,
  noFlipSentence,
  rejectedRecordsNote,
  resumedNote,
  unjudgedReason,
  unjudgedTasks,
  unsafeNote,
} from "./run-notes.js";
import { SETUP_HEADERS, SETUP_NOTE, setupRows } from "./setup.js";
import {
  budgetNote,
  calibrationNote,
  comparisonP,
  designNote,
  disagreementNotes,
  methodChangeNote,
} from "./statistics-notes.js";
import { TIER_HEADERS, tierCells, tierLines, tierRows } from "./tiers.js";

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
  const rate = `${m.passRate}${m.interval === "" ? "" : ` ${m.interval}`}${m.infraAsFailure === null ? "" : ` (${m.infraAsFailure} with infra errors as failures)`}`;
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

/** Rows of Markdown already made safe: untrusted text goes in through mdText or mdCode. */
function table(headers: readonly string[], rows: readonly (readonly string[])[]): string[] {
  return [
    `| ${headers.join(" | ")} |`,
    `|${headers.map(() => "---").join("|")}|`,
    ...rows.map((row) => `| ${row.map(mdCell).join(" | ")} |`),
  ];
}

/**
 * A relative link to a folder of the run: every segment is percent-encoded (a space, a
 * parenthesis or a `javascript:` would otherwise end or change the link) and the text is escaped.
 */
function link(linkBase: string, path: string, text = path): string {
  const target = `${linkBase}${path}`
    .split("/")
    .map((segment) => encodeURIComponent(segment))
    .join("/");
  return `[${mdText(text)}](${target}/)`;
}

/** A variant id, marked when it is the baseline. */
function variantName(id: string, isBaseline: boolean): string {
  return `${mdText(id)}${isBaseline ? " (baseline)" : ""}`;
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
  return [
    ...headLines(verdict),
    ...regradeLines(verdict, linkBase),
    ...variantLines(verdict),
    ...setupLines(verdict),
    ...tierSection(verdict),
    ...comparisonLines(verdict, linkBase),
    ...perTaskLines(verdict),
    ...retryLines(verdict, linkBase),
    ...trialLines(verdict, linkBase),
    ...evidenceLines(verdict),
  ].join("\n");
}

/** `Host \`scripted\``, or `Hosts \`claude-code\`, \`codex\`` when the variants ran on several. */
function hostsText(verdict: VerdictDocument): string {
  const hosts = runHosts(verdict);
  return `${hosts.length > 1 ? "Hosts" : "Host"} ${hosts.map(mdCode).join(", ")}`;
}

/** The status, the reason, the run's setting, and a note for anything that changes how to read it. */
function headLines(verdict: VerdictDocument): string[] {
  const lines: string[] = [];
  const stats = verdict.statistics;
  const unsafe = unsafeNote(verdict);
  if (unsafe !== null) lines.push(`> **${mdText(unsafe)}**`, "");
  lines.push(`# Verdict: ${statusLabel(verdict.status)}`, "", mdText(verdict.reason), "");
  if (verdict.regradeOf) lines.push(`Re-grade of ${mdCode(verdict.regradeOf)}.`, "");
  lines.push(
    `${hostsText(verdict)} · baseline ${mdCode(verdict.baseline)} · ${verdict.tasks.length} task(s) · ${verdict.trialsPerCell} trial(s) per variant and task · policy ${mdCode(stats?.policy.kind ?? "—")}`,
    "",
  );
  const interrupted = interruptedNote(verdict);
  if (interrupted !== null) lines.push(`> **Interrupted.** ${interrupted}`, "");
  const resumed = resumedNote(verdict);
  if (resumed !== null) lines.push(`> ${resumed}`, "");
  const rejected = rejectedRecordsNote(verdict);
  if (rejected !== null) lines.push(`> **Records set aside.** ${mdText(rejected)}`, "");
  if (!verdict.fixturesUnchanged)
    lines.push("> **A source fixture changed during the run; no verdict is given.**", "");
  for (const note of [designNote(verdict), budgetNote(verdict), calibrationNote(verdict)])
    if (note !== null) lines.push(`> ${mdText(note)}`, "");
  return lines;
}

/** Each variant's measures, its degraded components, and pass@k / pass^k. */
function variantLines(verdict: VerdictDocument): string[] {
  const lines: string[] = [];
  const stats = verdict.statistics;
  lines.push("## Variants", "");
  const variantAggs = stats?.aggregates.variants ?? [];
  lines.push(
    ...table(
      ["variant", "host · model", "composition", "revision", ...MEASURE_COLUMNS],
      verdict.variants.map((variant) => [
        variantName(variant.id, variant.isBaseline),
        mdText(hostModelText(verdict, variant)),
        mdText(variant.composition),
        mdCode(variant.revisionId),
        ...measureRow(measureTexts(variantAggs.find((v) => v.variant === variant.id))),
      ]),
    ),
  );
  lines.push(
    "",
    "Pass rates count completed trials (infrastructure errors left out), with a 95% Wilson interval in brackets. pass@k: at least one of k trials passes; pass^k: all k pass. Cost, tokens (input includes cache), turns and duration are means per completed trial; `≈… est.` is USD estimated from tokens at list prices for a host that reports none.",
  );
  const spend = spendRows(verdict);
  const basis = costBasisNote(verdict);
  if (spend !== null || basis !== null) {
    lines.push("", "### Cost", "");
    if (basis !== null) lines.push(mdText(basis), "");
    if (spend !== null)
      lines.push(
        ...table(
          SPEND_HEADERS,
          spend.map(([id, hostModel, ...amounts]) => [
            mdText(id ?? ""),
            mdText(hostModel ?? ""),
            ...amounts,
          ]),
        ),
      );
  }
  const degraded = verdict.variants.filter((v) => v.degraded.length > 0);
  if (degraded.length > 0) {
    lines.push("");
    for (const v of degraded)
      lines.push(
        `- ${mdCode(v.id)}: degraded components ${v.degraded.map((d) => mdCode(d)).join(", ")}`,
      );
  }
  const ks = passAtKColumns(variantAggs);
  if (ks.length > 2) {
    lines.push("", "### pass@k · pass^k", "");
    lines.push(
      ...table(
        ["variant", ...ks.map((k) => `k = ${k}`)],
        verdict.variants.map((v) => [
          mdText(v.id),
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

  return lines;
}

/** What each variant's setup materialized, when any variant has one. */
function setupLines(verdict: VerdictDocument): string[] {
  const rows = setupRows(verdict);
  if (rows.length === 0) return [];
  return [
    "",
    "## Setup as materialized",
    "",
    ...table(
      SETUP_HEADERS,
      rows.map((r) => [
        mdText(r.variant),
        mdCode(r.component),
        mdText(r.mechanism),
        r.short ? `**${mdText(r.loaded)}**` : mdText(r.loaded),
        mdText(r.missing),
        r.toolCalls,
      ]),
    ),
    "",
    SETUP_NOTE,
  ];
}

/** Per tier (forge suites): pass rates and means of each tier's tasks. */
function tierSection(verdict: VerdictDocument): string[] {
  const lines: string[] = [];
  const tiers = tierRows(verdict);
  if (tiers.length > 0) {
    lines.push("", "## Per tier", "");
    lines.push(
      ...table(
        TIER_HEADERS,
        tiers.map((row) => [
          mdText(row.tier),
          variantName(row.variant, row.isBaseline),
          ...tierCells(row).map(mdText),
        ]),
      ),
    );
    lines.push(
      "",
      "Pass rates of the tier's tasks over completed trials, with a 95% Wilson interval (trials of one tier's tasks are not independent samples of one task: read the interval as a guide). The arm is how the variant's agent reached the forge (`only`: its one tool). Turns, cost-equivalent tokens and tool calls are means per completed trial.",
    );
  }

  return lines;
}

/** Each candidate against the baseline, and the tasks that flipped. */
function comparisonLines(verdict: VerdictDocument, linkBase: string): string[] {
  const lines: string[] = [];
  const stats = verdict.statistics;
  if (!stats || stats.comparisons.length === 0) return lines;
  const unjudged = unjudgedTasks(verdict);
  lines.push("", "## Comparisons with the baseline", "");
  lines.push(
    ...table(
      [
        "variant",
        "status",
        "difference",
        "interval",
        "p",
        "mean score",
        "mean cost",
        "cost ratio",
        "flipped tasks",
      ],
      stats.comparisons.map((c) => {
        const notJudged = unjudged.filter((u) => u.variant === c.variant).length;
        return [
          mdText(c.variant),
          c.status,
          signedPoints(c.difference),
          c.interval
            ? `${signedPoints(c.interval.lower)} to ${signedPoints(c.interval.upper)} (${levelPercent(c.interval.level)}%, ${c.interval.method})`
            : "—",
          ((p) => (p.source === "" ? p.p : `${p.p} (${p.source})`))(comparisonP(c)),
          `${num(c.meanScore.variant)} vs ${num(c.meanScore.baseline)}`,
          comparisonCostTexts(c).means,
          comparisonCostTexts(c).ratio,
          (c.flippedTasks.length > 0
            ? c.flippedTasks.map((f) => mdText(f.task)).join(", ")
            : "none") + (notJudged > 0 ? ` (${notJudged} task(s) not judged)` : ""),
        ];
      }),
    ),
  );
  lines.push("");
  for (const c of stats.comparisons) lines.push(`- **${mdText(c.variant)}**: ${mdText(c.reason)}`);
  const disagreements = disagreementNotes(verdict);
  if (disagreements.length > 0) lines.push("", ...disagreements.map((n) => `> ${mdText(n)}`));

  lines.push("", "## Tasks that flipped", "");
  const flips = stats.comparisons.flatMap((c) => c.flippedTasks.map((f) => ({ c, f })));
  if (flips.length === 0) {
    lines.push(mdText(noFlipSentence(verdict, unjudged)));
  } else {
    lines.push(
      ...table(
        ["variant", "task", "direction", "baseline pass rate", "variant pass rate"],
        flips.map(({ c, f }) => [
          mdText(c.variant),
          mdText(f.task),
          f.direction === "improved" ? "improved (fail → pass)" : "regressed (pass → fail)",
          percent(f.baselinePassRate),
          percent(f.variantPassRate),
        ]),
      ),
    );
    lines.push(...flipTrialLines(verdict, linkBase));
  }
  if (unjudged.length > 0) {
    lines.push("", "Not judged (a side has no completed trial on the task):", "");
    for (const u of unjudged)
      lines.push(
        `- ${mdText(u.task)} · ${mdText(u.variant)} vs ${mdText(u.baseline)}: ${mdText(unjudgedReason(u))}`,
      );
  }
  return lines;
}

/** Each task's measures per variant. */
function perTaskLines(verdict: VerdictDocument): string[] {
  const lines: string[] = [];
  const stats = verdict.statistics;
  if (!stats) return lines;
  lines.push("", "## Per task", "");
  const rows: string[][] = [];
  for (const task of verdict.tasks)
    for (const variant of verdict.variants)
      rows.push([
        mdText(task),
        variantName(variant.id, variant.isBaseline),
        ...measureRow(
          measureTexts(
            stats.aggregates.cells.find((c) => c.task === task && c.variant === variant.id),
          ),
        ),
      ]);
  lines.push(...table(["task", "variant", ...MEASURE_COLUMNS], rows));
  return lines;
}

/** Trials retried after infrastructure errors, attempt by attempt. */
function retryLines(verdict: VerdictDocument, linkBase: string): string[] {
  const lines: string[] = [];
  const trials = readingOrder(verdict);
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
          `#${t.seq} ${mdText(t.task)} · ${mdText(t.variant)} · trial ${t.trial}`,
          String(a.attempt),
          a.infraReason ?? "—",
          mdText(a.explanation),
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

  return lines;
}

/** Every trial with its outcome, measures and folder. */
function trialLines(verdict: VerdictDocument, linkBase: string): string[] {
  const lines: string[] = [];
  const trials = readingOrder(verdict);
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
        mdText(t.task),
        mdText(t.variant),
        `${t.trial}${t.retriedAttempts.length > 0 ? ` (${t.retriedAttempts.length + 1} attempts)` : ""}`,
        `${t.outcome}${t.infraReason ? ` (${t.infraReason})` : ""}`,
        num(t.score),
        mdText(t.explanation),
        t.turns === null ? "—" : String(t.turns),
        trialTokens(t.tokens),
        usd(t.costUsd),
        link(linkBase, t.artifactDir),
      ]),
    ),
  );
  if (verdict.variants.some((v) => v.forgeAccess !== undefined))
    lines.push(
      "",
      "Forge tasks' trial folders also hold `forge-before.json` and `forge-after.json` (the repository's issues and pull requests before and after the agent) and `forge-write-log.json` (every write it made); a failed forge trial's explanation names what the task asked for and is not done, then the collateral changes.",
    );
  return lines;
}

/** The hashes the verdict rests on, and when the run ran. */
function evidenceLines(verdict: VerdictDocument): string[] {
  return [
    "",
    "## Evidence",
    "",
    `- manifest ${mdCode(verdict.evidence.manifestHash)}`,
    `- harness ${mdCode(verdict.evidence.harnessHash)}`,
    ...Object.entries(verdict.evidence.fixtureHashes).map(
      ([task, hash]) => `- fixture of ${mdCode(task)} ${mdCode(hash)}`,
    ),
    `- fixtures unchanged after the run: ${verdict.fixturesUnchanged ? "yes" : "**no**"}`,
    `- started ${mdText(verdict.startedAt)}, finished ${mdText(verdict.finishedAt)}${verdict.regradeOf ? `; re-grade of ${mdCode(verdict.regradeOf)}` : ""}`,
    "",
    "One task is not proof of a general improvement, and agents are nondeterministic: read the interval, not just the status.",
    "",
  ];
}

/** Each flipped task's trials of both variants, linked to their folders (verdicts that list them). */
function flipTrialLines(verdict: VerdictDocument, linkBase: string): string[] {
  const flips = verdict.flips ?? [];
  if (flips.length === 0) return [];
  const lines = [
    "",
    "Trials of each flipped task (each folder holds the patch, the checks and the trace):",
    "",
  ];
  for (const flip of flips) {
    const side = (variant: string) =>
      flip.trials
        .filter((t) => t.variant === variant)
        .map((t) =>
          link(
            linkBase,
            t.artifactDir,
            `trial ${t.trial} ${t.outcome}${t.score === null ? "" : ` (${num(t.score)})`}`,
          ),
        )
        .join(", ");
    lines.push(
      `- ${mdText(flip.task)} · ${mdText(flip.variant)} ${flip.direction}: ${mdText(flip.variant)} ${side(flip.variant)}; ${mdText(flip.baseline)} ${side(flip.baseline)}`,
    );
  }
  return lines;
}

const DIRECTION_LABEL = { up: "up", down: "down", other: "changed" } as const;

/** The re-grade section: what it re-grades, the contracts used, what changed and where. */
function regradeLines(verdict: VerdictDocument, linkBase: string): string[] {
  if (!verdict.regradeOf) return [];
  const lines = [
    "## Re-grade",
    "",
    `This verdict re-grades ${mdCode(verdict.regradeOf)}: each trial's recorded patch was applied to a fresh copy of its fixture and graded again; no agent ran.`,
    "",
  ];
  const summary = verdict.regradeSummary;
  lines.push(
    summary === undefined
      ? "This verdict does not record what changed."
      : `**${mdText(formatChangeLine(summary))}**`,
    "",
  );
  const method = methodChangeNote(verdict);
  if (method !== null) lines.push(`> ${mdText(method)}`, "");
  const contracts = verdict.graderContracts;
  if (contracts !== undefined) {
    if (contracts.length === 0) lines.push("No grader of these tasks takes a contract.", "");
    else
      lines.push(
        "Grader contracts used:",
        "",
        ...table(
          ["task", "grader", "from", "file", "contract hash"],
          contracts.map((c) => [
            mdText(c.task),
            mdCode(c.grader),
            c.source === "option" ? "`--grader-contract`" : "the manifest",
            mdCode(c.path),
            mdCode(c.contractHash),
          ]),
        ),
        "",
      );
  }
  if (summary !== undefined && summary.changes.length > 0) {
    const score = (value: number | null) => (value === null ? "—" : String(value));
    lines.push(
      "Changed trials:",
      "",
      ...table(
        ["trial", "variant", "change", "before", "after", "why, now"],
        summary.changes.map((c) => [
          link(linkBase, c.artifactDir),
          mdText(c.variant),
          DIRECTION_LABEL[c.direction],
          `${mdText(c.before.outcome)} (${score(c.before.score)})`,
          `${mdText(c.after.outcome)} (${score(c.after.score)})`,
          mdText(c.after.explanation),
        ]),
      ),
      "",
    );
  }
  return lines;
}

/**
 * The terminal summary: status and reason; each variant's passed/completed and score; the
 * difference with its interval and p-value; a line for a budget stop, an A/A calibration or an
 * old verdict whose interval and exact test disagree; where the evidence is.
 */
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
    ? `${best.variant} − ${verdict.baseline}: ${signedPoints(best.difference)} (${levelPercent(best.interval.level)}% CI ${signedPoints(best.interval.lower)} to ${signedPoints(best.interval.upper)}, p = ${comparisonP(best).p})`
    : "no interval (not enough completed trials)";
  const unsafe = unsafeNote(verdict);
  const rejected = rejectedRecordsNote(verdict);
  const notes = [budgetNote(verdict), calibrationNote(verdict), ...disagreementNotes(verdict)];
  return [
    ...(unsafe === null ? [] : [unsafe]),
    `verdict: ${verdict.status} — ${verdict.reason}`,
    `variants: ${variants}${retried}`,
    `difference: ${interval}`,
    ...tierLines(verdict).map((line) => `tier ${line}`),
    ...notes.filter((n): n is string => n !== null).map((n) => `note: ${n}`),
    `evidence: ${outDir}/verdict.md (also verdict.json, verdict.html, per-trial folders)${verdict.resumedTrials > 0 ? `; ${verdict.resumedTrials} trial(s) taken from an earlier run` : ""}${verdict.cachedTrials > 0 ? `; ${verdict.cachedTrials} trial(s) taken from the trial cache` : ""}`,
    ...(rejected === null ? [] : [`warning: ${rejected}`]),
    ...infrastructureCauses(verdict),
  ].join("\n");
}

/**
 * The most frequent causes of the run's infrastructure errors, each with its count and the first
 * line of one explanation, so the console says what broke (a missing login, a grader that cannot
 * start) instead of only how many trials it cost.
 */
function infrastructureCauses(verdict: VerdictDocument, top = 3): string[] {
  const byReason = new Map<string, { count: number; example: string }>();
  for (const trial of verdict.trials) {
    if (trial.outcome !== "infrastructure_error") continue;
    const reason = trial.infraReason ?? "unknown";
    const seen = byReason.get(reason);
    if (seen) seen.count += 1;
    else
      byReason.set(reason, {
        count: 1,
        example: (trial.explanation.split(/\r?\n/, 1)[0] ?? "")
          .replace(`${reason}: `, "")
          .slice(0, 200),
      });
  }
  if (byReason.size === 0) return [];
  const ranked = [...byReason].sort((a, b) => b[1].count - a[1].count || (a[0] < b[0] ? -1 : 1));
  const shown = ranked
    .slice(0, top)
    .map(([reason, { count, example }]) => `${count} × ${reason} (${example})`);
  const more = ranked.length > top ? `; ${ranked.length - top} more cause(s) in verdict.md` : "";
  return [`infrastructure errors: ${shown.join("; ")}${more}`];
}

import type { VerdictDocument, VerdictTrial } from "../artifacts/index.js";
import type { Comparison, RateInterval, VariantAggregate } from "../stats/index.js";
import {
  comparisonCostTexts,
  costBasisNote,
  costPoints,
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
import { costPlot } from "./html-cost-plot.js";
import { HTML_STYLE } from "./html-style.js";
import { esc, href } from "./html-text.js";
import {
  type EvidenceLimits,
  evidenceLimits,
  outcomeBadge,
  renderTrialEvidence,
  trialAnchor,
} from "./html-trial.js";
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
import { TIER_HEADERS, tierCells, tierRows } from "./tiers.js";
import type { HtmlReportOptions, TrialDetails } from "./types.js";

/** Our own sentences mark commands with backticks; on the page they become code. */
function sentence(text: string): string {
  return esc(text).replace(/`([^`]+)`/g, "<code>$1</code>");
}

// Agent-controlled text is everywhere in this page, so it allows nothing but inline styles and
// data: images: no script, no remote request, no form, even if escaping were ever missed.
const CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'none'; base-uri 'none'";

/** A small bar: the interval as a band on [0, 100%], the point estimate as a tick. */
function rateBar(rate: number | null, interval: RateInterval | null): string {
  if (interval === null || rate === null) return "";
  const at = (x: number) => `${(x * 100).toFixed(1)}%`;
  return `<span class="bar" aria-hidden="true"><span class="band" style="left:${at(interval.lower)};width:${at(interval.upper - interval.lower)}"></span><span class="tick" style="left:${at(rate)}"></span></span>`;
}

/** The same for a difference: the scale is −100 … +100 points, with 0 marked. */
function differenceBar(c: Comparison): string {
  if (c.interval === null || c.difference === null) return "";
  const at = (x: number) => `${((x + 1) * 50).toFixed(1)}%`;
  const side = c.interval.lower > 0 ? "up" : c.interval.upper < 0 ? "down" : "";
  return `<span class="bar diffbar" aria-hidden="true"><span class="zero"></span><span class="band ${side}" style="left:${at(c.interval.lower)};width:${((c.interval.upper - c.interval.lower) * 50).toFixed(1)}%"></span><span class="tick" style="left:${at(c.difference)}"></span></span>`;
}

function measureCells(
  m: MeasureTexts,
  agg:
    | { passRate: { excludingInfra: number | null }; passRateInterval: RateInterval | null }
    | undefined,
): string {
  const infra =
    m.infraAsFailure === null
      ? ""
      : `<div class="sub">${m.infraAsFailure} with infra errors as failures</div>`;
  return [
    `<td class="num">${m.passedOfCompleted}</td>`,
    `<td class="num rate"><strong>${m.passRate}</strong>${m.interval === "" ? "" : ` <span class="ci">${m.interval}</span>`}${rateBar(agg?.passRate.excludingInfra ?? null, agg?.passRateInterval ?? null)}${infra}</td>`,
    `<td class="num${m.infraErrors !== "0" && m.infraErrors !== "—" ? " warn" : ""}">${m.infraErrors}</td>`,
    `<td class="num">${m.meanScore}</td>`,
    `<td class="num">${m.passAt1}</td>`,
    `<td class="num">${m.passAtLargestK}</td>`,
    `<td class="num">${m.meanCost}</td>`,
    `<td class="num">${m.tokens}</td>`,
    `<td class="num">${m.turns}</td>`,
    `<td class="num">${m.duration}</td>`,
  ].join("");
}

const MEASURE_TH = [
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
]
  .map((h) => `<th>${esc(h)}</th>`)
  .join("");

function variantsSection(verdict: VerdictDocument): string {
  const aggs = verdict.statistics?.aggregates.variants ?? [];
  // Most runs degrade nothing: the column then gives way to a line under the table.
  const anyDegraded = verdict.variants.some((v) => v.degraded.length > 0);
  const out = [
    '<section id="variants"><h2>Variants</h2>',
    `<div class="scroll-x"><table class="main" id="variants-table"><thead><tr><th>variant</th><th>host · model</th><th>composition · revision</th>${MEASURE_TH}${anyDegraded ? "<th>degraded components</th>" : ""}</tr></thead><tbody>`,
  ];
  for (const variant of verdict.variants) {
    const agg = aggs.find((v) => v.variant === variant.id);
    out.push(
      `<tr${variant.isBaseline ? ' class="baseline"' : ""}><td><strong>${esc(variant.id)}</strong>${variant.isBaseline ? ' <span class="tag">baseline</span>' : ""}${variant.label && variant.label !== variant.id ? `<div class="sub">${esc(variant.label)}</div>` : ""}</td>` +
        `<td>${esc(hostModelText(verdict, variant))}</td>` +
        `<td>${esc(variant.composition)}<div class="sub"><code>${esc(variant.revisionId)}</code></div></td>` +
        measureCells(measureTexts(agg), agg) +
        (anyDegraded
          ? `<td>${variant.degraded.map((d) => `<code class="warn">${esc(d)}</code>`).join(" ") || '<span class="muted">none</span>'}</td>`
          : "") +
        "</tr>",
    );
  }
  out.push("</tbody></table></div>");
  out.push(
    passAtKTable(
      verdict.variants.map((v) => v.id),
      aggs,
    ),
  );
  out.push(
    `<p class="note">Pass rates count completed trials (infrastructure errors left out); the bracket is a 95% Wilson score interval, drawn as the band (the tick is the rate). pass@k: chance that at least one of k trials passes; pass^k: that all k pass (unbiased estimates, mean over tasks). Cost, tokens (input includes cache reads and writes), turns and duration are means per completed trial; ≈… est. is USD estimated from tokens at list prices for a host that reports none.${anyDegraded ? "" : " No variant has degraded components."}</p>`,
    "</section>",
  );
  return out.join("\n");
}

/** Pass rate against mean cost per variant, the spending per variant, and how cost was compared. */
function costSection(verdict: VerdictDocument): string {
  const spend = spendRows(verdict);
  const basis = costBasisNote(verdict);
  if (spend === null && basis === null) return "";
  const out = ['<section id="cost"><h2>Cost</h2>'];
  if (basis !== null) out.push(`<p>${esc(basis)}</p>`);
  const plot = costPoints(verdict);
  if (plot.points.length >= 2) out.push(costPlot(plot.points, plot.basis, plot.missing));
  if (spend !== null)
    out.push(
      `<div class="scroll-x"><table id="spend-table"><thead><tr>${SPEND_HEADERS.map((h) => `<th>${esc(h)}</th>`).join("")}</tr></thead><tbody>`,
      ...spend.map(
        (row) =>
          `<tr>${row.map((cell, i) => (i === 0 ? `<td><strong>${esc(cell)}</strong></td>` : `<td${i === 2 || i === 3 ? ' class="num"' : ""}>${esc(cell)}</td>`)).join("")}</tr>`,
      ),
      "</tbody></table></div>",
    );
  out.push("</section>");
  return out.join("\n");
}

/** What each variant's setup materialized; nothing when no variant has one. */
function setupSection(verdict: VerdictDocument): string {
  const rows = setupRows(verdict);
  if (rows.length === 0) return "";
  const body = rows
    .map(
      (r) =>
        `<tr><td>${esc(r.variant)}</td><td><code>${esc(r.component)}</code></td><td>${esc(r.mechanism)}</td>` +
        `<td${r.short ? ' class="warn"' : ""}>${esc(r.loaded)}</td><td>${esc(r.missing)}</td><td>${esc(r.toolCalls)}</td></tr>`,
    )
    .join("");
  return [
    '<section id="setup"><h2>Setup as materialized</h2>',
    `<div class="scroll-x"><table class="main" id="setup-table"><thead><tr>${SETUP_HEADERS.map((h) => `<th>${esc(h)}</th>`).join("")}</tr></thead><tbody>${body}</tbody></table></div>`,
    `<p class="note">${esc(SETUP_NOTE)}</p>`,
    "</section>",
  ].join("\n");
}

function passAtKTable(order: readonly string[], aggs: readonly VariantAggregate[]): string {
  const ks = passAtKColumns(aggs);
  if (ks.length <= 2) return "";
  const rows = order.map((id) => {
    const agg = aggs.find((a) => a.variant === id);
    return `<tr><td>${esc(id)}</td>${ks.map((k) => `<td class="num">${passAtKText(agg, k)}</td>`).join("")}</tr>`;
  });
  return `<h3>pass@k · pass^k</h3><div class="scroll-x"><table class="compact"><thead><tr><th>variant</th>${ks.map((k) => `<th>k = ${k}</th>`).join("")}</tr></thead><tbody>${rows.join("")}</tbody></table></div>`;
}

function comparisonsSection(verdict: VerdictDocument): string {
  const stats = verdict.statistics;
  if (!stats || stats.comparisons.length === 0) return "";
  const unjudged = unjudgedTasks(verdict);
  const out = [
    '<section id="comparisons"><h2>Comparisons with the baseline</h2>',
    '<div class="scroll-x"><table class="main"><thead><tr><th>variant</th><th>status</th><th>pass rate</th><th>difference</th><th>interval</th><th>p</th><th>mean score</th><th>mean cost</th><th>cost ratio</th><th>flipped tasks</th></tr></thead><tbody>',
  ];
  for (const c of stats.comparisons) {
    const interval = c.interval
      ? `${signedPoints(c.interval.lower)} to ${signedPoints(c.interval.upper)}${differenceBar(c)}<div class="sub">${levelPercent(c.interval.level)}%, ${esc(c.interval.method)}</div>`
      : "—";
    const infraDiff =
      c.infraAsFailure.difference !== null && c.infraAsFailure.difference !== c.difference
        ? `<div class="sub">${signedPoints(c.infraAsFailure.difference)} with infra errors as failures</div>`
        : "";
    const improved = c.flippedTasks.filter((f) => f.direction === "improved").length;
    const regressed = c.flippedTasks.length - improved;
    out.push(
      `<tr><td><strong>${esc(c.variant)}</strong> <span class="muted">vs ${esc(c.baseline)}</span></td><td><span class="status small st-${c.status}">${statusLabel(c.status)}</span></td>` +
        `<td class="num">${percent(c.passRate.variant.excludingInfra)} vs ${percent(c.passRate.baseline.excludingInfra)}</td>` +
        `<td class="num"><strong>${signedPoints(c.difference)}</strong>${infraDiff}</td><td class="num">${interval}</td>` +
        `<td class="num">${((p) => `${esc(p.p)}${p.source === "" ? "" : `<div class="sub">${esc(p.source)}</div>`}`)(comparisonP(c))}</td>` +
        `<td class="num">${num(c.meanScore.variant)} vs ${num(c.meanScore.baseline)}</td>` +
        `<td class="num">${esc(comparisonCostTexts(c).means)}</td>` +
        `<td class="num">${esc(comparisonCostTexts(c).ratio)}${c.costRatio.credits === null ? "" : `<div class="sub">credits ${num(c.costRatio.credits, 2)}×</div>`}</td>` +
        `<td>${c.flippedTasks.length === 0 ? `<span class="muted">none</span>${notJudgedCount(unjudged, c.variant)}` : `<a href="#flipped">${improved > 0 ? `<span class="up">${improved} improved</span>` : ""}${improved > 0 && regressed > 0 ? ", " : ""}${regressed > 0 ? `<span class="down">${regressed} regressed</span>` : ""}</a>`}</td></tr>`,
    );
  }
  out.push('</tbody></table></div><ul class="reasons">');
  for (const c of stats.comparisons)
    out.push(`<li><strong>${esc(c.variant)}</strong>: ${esc(c.reason)}</li>`);
  out.push("</ul>");
  for (const note of disagreementNotes(verdict))
    out.push(`<p class="callout bad">${sentence(note)}</p>`);
  out.push("</section>");
  return out.join("\n");
}

function notJudgedCount(unjudged: ReturnType<typeof unjudgedTasks>, variant: string): string {
  const n = unjudged.filter((u) => u.variant === variant).length;
  return n === 0 ? "" : `<div class="sub"><a href="#flipped">${n} task(s) not judged</a></div>`;
}

function unjudgedList(verdict: VerdictDocument): string {
  const unjudged = unjudgedTasks(verdict);
  if (unjudged.length === 0) return "";
  const items = unjudged.map(
    (u) =>
      `<li><strong>${esc(u.task)}</strong> · ${esc(u.variant)} vs ${esc(u.baseline)}: ${esc(unjudgedReason(u))}</li>`,
  );
  return `<p class="note">Not judged (a side has no completed trial on the task):</p><ul class="reasons">${items.join("")}</ul>`;
}

/** Each flipped task's trials of both variants: links to the evidence below and to the folders. */
function flipTrials(verdict: VerdictDocument, linkBase: string): string {
  const flips = verdict.flips ?? [];
  if (flips.length === 0) return "";
  const side = (flip: (typeof flips)[number], variant: string) =>
    flip.trials
      .filter((t) => t.variant === variant)
      .map(
        (t) =>
          `<a href="#${trialAnchor(t)}" class="${t.outcome === "passed" ? "up" : "down"}">#${t.trial} ${esc(t.outcome)}</a> <a href="${href(`${linkBase}${t.artifactDir}`)}/" class="muted">folder</a>`,
      )
      .join(" · ");
  const items = flips.map(
    (flip) =>
      `<li><strong>${esc(flip.task)}</strong> · ${esc(flip.variant)} ${esc(flip.direction)}: ${esc(flip.variant)} ${side(flip, flip.variant)}; ${esc(flip.baseline)} ${side(flip, flip.baseline)}</li>`,
  );
  return `<p class="note">The trials of each flipped task (each one's evidence below, and its folder with the patch, checks and trace):</p><ul class="reasons">${items.join("")}</ul>`;
}

function flippedSection(verdict: VerdictDocument, linkBase: string): string {
  const stats = verdict.statistics;
  if (!stats || stats.comparisons.length === 0) return "";
  const flips = stats.comparisons.flatMap((c) => c.flippedTasks.map((f) => ({ c, f })));
  const out = ['<section id="flipped"><h2>Tasks that flipped</h2>'];
  if (flips.length === 0) {
    out.push(
      `<p>${esc(noFlipSentence(verdict, unjudgedTasks(verdict)))}</p>${unjudgedList(verdict)}</section>`,
    );
    return out.join("\n");
  }
  out.push(
    '<p class="note">A task flips when the majority outcome changes between the baseline and a variant (infrastructure errors left out).</p>',
    '<table class="main flips"><thead><tr><th>variant</th><th>task</th><th>direction</th><th>baseline pass rate</th><th></th><th>variant pass rate</th></tr></thead><tbody>',
  );
  for (const { c, f } of flips) {
    const up = f.direction === "improved";
    out.push(
      `<tr class="${up ? "flip-up" : "flip-down"}"><td>${esc(c.variant)}</td><td><strong>${esc(f.task)}</strong></td><td class="${up ? "up" : "down"}">${up ? "▲ improved (fail → pass)" : "▼ regressed (pass → fail)"}</td>` +
        `<td class="num">${percent(f.baselinePassRate)} <span class="muted">${esc(c.baseline)}</span></td><td class="arrow">→</td><td class="num">${percent(f.variantPassRate)} <span class="muted">${esc(c.variant)}</span></td></tr>`,
    );
  }
  out.push(`</tbody></table>${flipTrials(verdict, linkBase)}${unjudgedList(verdict)}</section>`);
  return out.join("\n");
}

function tasksSection(verdict: VerdictDocument): string {
  const stats = verdict.statistics;
  if (!stats) return "";
  const out = [
    '<section id="tasks"><h2>Per task</h2>',
    `<div class="scroll-x"><table class="main" id="tasks-table"><thead><tr><th>task</th><th>variant</th>${MEASURE_TH}</tr></thead><tbody>`,
  ];
  for (const task of verdict.tasks) {
    const cells = verdict.variants.map((v) => ({
      variant: v,
      cell: stats.aggregates.cells.find((c) => c.task === task && c.variant === v.id),
    }));
    cells.forEach(({ variant, cell }, index) => {
      const first =
        index === 0
          ? `<td rowspan="${cells.length}" class="task"><strong>${esc(task)}</strong></td>`
          : "";
      out.push(
        `<tr${index === 0 ? ' class="group"' : ""}>${first}<td>${esc(variant.id)}${variant.isBaseline ? ' <span class="tag">baseline</span>' : ""}</td>${measureCells(measureTexts(cell), cell)}</tr>`,
      );
    });
  }
  out.push("</tbody></table></div></section>");
  return out.join("\n");
}

function tiersSection(verdict: VerdictDocument): string {
  const rows = tierRows(verdict);
  if (rows.length === 0) return "";
  const out = [
    '<section id="tiers"><h2>Per tier</h2>',
    `<div class="scroll-x"><table class="main" id="tiers-table"><thead><tr>${TIER_HEADERS.map((h) => `<th>${esc(h)}</th>`).join("")}</tr></thead><tbody>`,
  ];
  rows.forEach((row, index) => {
    const group = rows.filter((r) => r.tier === row.tier);
    const first =
      group[0] === row
        ? `<td rowspan="${group.length}" class="task"><strong>${esc(row.tier)}</strong></td>`
        : "";
    out.push(
      `<tr${group[0] === row && index > 0 ? ' class="group"' : ""}>${first}<td>${esc(row.variant)}${row.isBaseline ? ' <span class="tag">baseline</span>' : ""}</td>${tierCells(
        row,
      )
        .map((cell) => `<td>${esc(cell)}</td>`)
        .join("")}</tr>`,
    );
  });
  out.push(
    "</tbody></table></div><p class=\"note\">Pass rates of the tier's tasks over completed trials, with a 95% Wilson interval; the arm is how the variant's agent reached the forge (only: its one tool); turns, cost-equivalent tokens and tool calls are means per completed trial.</p></section>",
  );
  return out.join("\n");
}

function retriesSection(
  verdict: VerdictDocument,
  trials: readonly VerdictTrial[],
  linkBase: string,
): string {
  const r = verdict.infraRetries;
  if (r.trialsRetried === 0) {
    return r.limit > 0
      ? `<section id="retries"><h2>Infrastructure retries</h2><p>Trials could be re-run up to ${r.limit} time(s) after an infrastructure error; none needed it.</p></section>`
      : "";
  }
  const out = [
    '<section id="retries"><h2>Infrastructure retries</h2>',
    `<p class="callout"><strong>${r.trialsRetried} trial(s) were retried</strong> after infrastructure errors (up to ${r.limit} retries each): ${r.extraAttempts} extra attempt(s), ${r.recovered} recovered (their last attempt was not an infrastructure error)${r.extraCostUsd === null ? "" : `, ${usd(r.extraCostUsd)} spent on the retried attempts`}. The statistics count each trial's last attempt only; every attempt's files are kept in its trial folder.</p>`,
    '<table class="main"><thead><tr><th>trial</th><th>attempt</th><th>infra reason / outcome</th><th>explanation</th><th>duration</th><th>cost</th><th>folder</th></tr></thead><tbody>',
  ];
  for (const t of trials) {
    if (t.retriedAttempts.length === 0) continue;
    const folder = `${linkBase}${t.artifactDir}`;
    const span = t.retriedAttempts.length + 1;
    t.retriedAttempts.forEach((a, index) => {
      const first =
        index === 0
          ? `<td rowspan="${span}"><a href="#${trialAnchor(t)}">#${t.seq}</a> ${esc(t.task)} · ${esc(t.variant)} · trial ${t.trial}</td>`
          : "";
      out.push(
        `<tr>${first}<td class="num">${a.attempt}</td><td><code>${esc(a.infraReason ?? "—")}</code></td><td>${esc(a.explanation)}</td><td class="num">${duration(a.durationMs)}</td><td class="num">${usd(a.costUsd)}</td><td><a href="${href(`${folder}/${a.dir}`)}/">${esc(`${t.artifactDir}/${a.dir}`)}/</a></td></tr>`,
      );
    });
    out.push(
      `<tr class="final-attempt"><td class="num">${span}</td><td>${outcomeBadge(t)}</td><td>${esc(t.explanation)}</td><td class="num">${duration(t.durationMs)}</td><td class="num">${usd(t.costUsd)}</td><td><a href="${href(folder)}/">${esc(t.artifactDir)}/</a></td></tr>`,
    );
  }
  out.push("</tbody></table></section>");
  return out.join("\n");
}

function trialsSection(trials: readonly VerdictTrial[]): string {
  const out = [
    '<section id="trials"><h2>Trials</h2>',
    '<div class="scroll-x"><table class="main trials"><thead><tr><th>#</th><th>task</th><th>variant</th><th>trial</th><th>outcome</th><th>score</th><th>explanation</th><th>changed files</th><th>denied</th><th>turns</th><th>tokens in / out</th><th>cost</th><th>duration</th><th>evidence</th></tr></thead><tbody>',
  ];
  for (const t of trials) {
    const files = t.changedFiles.slice(0, 8).map((f) => `<code>${esc(f)}</code>`);
    if (t.changedFiles.length > 8)
      files.push(`<span class="muted">+${t.changedFiles.length - 8} more</span>`);
    out.push(
      `<tr><td class="num">${t.seq}</td><td>${esc(t.task)}</td><td>${esc(t.variant)}</td><td class="num">${t.trial}${t.retriedAttempts.length > 0 ? ` <span class="tag warn" title="retried">×${t.retriedAttempts.length + 1}</span>` : ""}</td><td>${outcomeBadge(t)}</td>` +
        `<td class="num">${num(t.score)}</td><td class="explain">${esc(t.explanation)}</td><td>${files.join("<br>") || '<span class="muted">—</span>'}</td><td class="num${t.permissionDenials > 0 ? " fail" : ""}">${t.permissionDenials}</td>` +
        `<td class="num">${t.turns ?? "—"}</td><td class="num">${trialTokens(t.tokens)}</td><td class="num">${usd(t.costUsd)}</td><td class="num">${duration(t.durationMs)}</td><td><a href="#${trialAnchor(t)}">evidence</a></td></tr>`,
    );
  }
  out.push("</tbody></table></div></section>");
  return out.join("\n");
}

const DIRECTION_LABEL = { up: "▲ up", down: "▼ down", other: "changed" } as const;

function scoreText(score: number | null): string {
  return score === null ? "—" : String(score);
}

/** What a re-grade changed against the verdict it re-grades, and the contracts it graded with. */
function regradeSection(verdict: VerdictDocument, linkBase: string): string {
  if (!verdict.regradeOf) return "";
  const out = [
    '<section id="regrade"><h2>Re-grade</h2>',
    `<p>This verdict re-grades <code>${esc(verdict.regradeOf)}</code>: each trial's recorded patch was applied to a fresh copy of its fixture and graded again; no agent ran.</p>`,
  ];
  const summary = verdict.regradeSummary;
  if (summary === undefined) {
    out.push('<p class="muted">This verdict does not record what changed.</p>');
  } else {
    out.push(`<p class="callout regrade"><strong>${esc(formatChangeLine(summary))}</strong></p>`);
    const method = methodChangeNote(verdict);
    if (method !== null) out.push(`<p class="callout">${sentence(method)}</p>`);
  }
  const contracts = verdict.graderContracts;
  if (contracts !== undefined) {
    out.push("<h3>Grader contracts used</h3>");
    if (contracts.length === 0) {
      out.push('<p class="muted">No grader of these tasks takes a contract.</p>');
    } else {
      out.push(
        '<div class="scroll-x"><table class="compact"><thead><tr><th>task</th><th>grader</th><th>from</th><th>file</th><th>contract hash</th></tr></thead><tbody>',
        ...contracts.map(
          (c) =>
            `<tr><td>${esc(c.task)}</td><td><code>${esc(c.grader)}</code></td><td>${c.source === "option" ? "<code>--grader-contract</code>" : "the manifest"}</td><td><code>${esc(c.path)}</code></td><td><code>${esc(c.contractHash)}</code></td></tr>`,
        ),
        "</tbody></table></div>",
      );
    }
  }
  if (summary !== undefined && summary.changes.length > 0) {
    const seqOf = new Map(verdict.trials.map((t) => [t.artifactDir, t.seq]));
    out.push(
      "<h3>Changed trials</h3>",
      '<div class="scroll-x"><table class="main regrade"><thead><tr><th>trial</th><th>variant</th><th>change</th><th>before</th><th>after</th><th>why, now</th></tr></thead><tbody>',
    );
    for (const c of summary.changes) {
      const seq = seqOf.get(c.artifactDir);
      const evidence = seq === undefined ? "" : ` · <a href="#trial-${seq}">evidence</a>`;
      out.push(
        `<tr><td><a href="${href(`${linkBase}${c.artifactDir}`)}/">${esc(c.artifactDir)}/</a>${evidence}</td><td>${esc(c.variant)}</td><td class="dir ${c.direction}">${DIRECTION_LABEL[c.direction]}</td>` +
          `<td>${esc(c.before.outcome)} (${scoreText(c.before.score)})</td><td>${esc(c.after.outcome)} (${scoreText(c.after.score)})</td><td class="explain">${esc(c.after.explanation)}</td></tr>`,
      );
    }
    out.push("</tbody></table></div>");
  }
  out.push("</section>");
  return out.join("\n");
}

/**
 * verdict.html in three parts, so a caller can render the trials' evidence one at a time (reading
 * each trial's files just before): `head`, then `evidence(trial, details)` for each of `trials`
 * in that order, then `tail`, joined with newlines. `renderHtmlReport` does exactly that.
 */
export interface HtmlReportParts {
  head: string;
  trials: VerdictTrial[];
  /** What each trial may show; a reader of trial folders need not read more. */
  limits: EvidenceLimits;
  evidence(trial: VerdictTrial, details: TrialDetails | undefined): string;
  tail: string;
}

export function htmlReportParts(
  verdict: VerdictDocument,
  options: HtmlReportOptions = {},
): HtmlReportParts {
  const linkBase = options.linkBase ?? "";
  const stats = verdict.statistics;
  const trials = readingOrder(verdict);
  const limits = evidenceLimits(trials.length);
  const best = stats?.best ? ` · best candidate <strong>${esc(stats.best)}</strong>` : "";
  const interrupted = interruptedNote(verdict);
  const resumed = resumedNote(verdict);
  const unsafe = unsafeNote(verdict);
  const rejected = rejectedRecordsNote(verdict);
  const head: string[] = [
    "<!doctype html>",
    '<html lang="en"><head><meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${CSP}">`,
    '<meta name="referrer" content="no-referrer">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>harnesslab verdict: ${esc(statusLabel(verdict.status))}</title><style>${HTML_STYLE}</style></head><body>`,
    ...(unsafe === null
      ? []
      : [`<p class="callout bad" id="unsafe"><strong>${esc(unsafe)}</strong></p>`]),
    `<header class="verdict st-${verdict.status}" id="verdict">`,
    `<div class="kicker">harnesslab verdict${verdict.regradeOf ? ` · re-grade of <code>${esc(verdict.regradeOf)}</code>` : ""}${verdict.interrupted ? " · interrupted run" : ""}</div>`,
    `<h1><span class="status st-${verdict.status}">${statusLabel(verdict.status)}</span>${best}</h1>`,
    `<p class="reason">${esc(verdict.reason)}</p>`,
    `<p class="meta">${runHosts(verdict).length > 1 ? "hosts" : "host"} ${runHosts(verdict)
      .map((h) => `<code>${esc(h)}</code>`)
      .join(
        ", ",
      )} · baseline <code>${esc(verdict.baseline)}</code> · ${verdict.variants.length} variant(s) · ${verdict.tasks.length} task(s) · ${verdict.trialsPerCell} trial(s) per variant and task · policy <code>${esc(stats?.policy.kind ?? "—")}</code> · fixtures unchanged: ${verdict.fixturesUnchanged ? "yes" : '<strong class="fail">no</strong>'}</p>`,
    "</header>",
  ];
  if (interrupted !== null)
    head.push(
      `<p class="callout bad" id="interrupted"><strong>Interrupted.</strong> ${sentence(interrupted)}</p>`,
    );
  if (resumed !== null) head.push(`<p class="callout" id="resumed">${sentence(resumed)}</p>`);
  if (rejected !== null)
    head.push(
      `<p class="callout bad" id="rejected-records"><strong>Records set aside.</strong> ${esc(rejected)}</p>`,
    );
  for (const [id, note] of [
    ["design", designNote(verdict)],
    ["budget", budgetNote(verdict)],
    ["calibration", calibrationNote(verdict)],
  ] as const)
    if (note !== null) head.push(`<p class="callout" id="${id}">${sentence(note)}</p>`);
  if (!verdict.fixturesUnchanged)
    head.push(
      '<p class="callout bad">A source fixture changed during the run, so no verdict is given. The trials\' evidence below is kept.</p>',
    );
  head.push(
    "<nav>" +
      (verdict.regradeOf ? '<a href="#regrade">Re-grade</a>' : "") +
      '<a href="#variants">Variants</a>' +
      (costBasisNote(verdict) !== null || spendRows(verdict) !== null
        ? '<a href="#cost">Cost</a>'
        : "") +
      (verdict.taskTiers === undefined ? "" : '<a href="#tiers">Per tier</a>') +
      '<a href="#comparisons">Comparisons</a><a href="#flipped">Flipped tasks</a><a href="#tasks">Per task</a>' +
      (verdict.infraRetries.trialsRetried > 0 || verdict.infraRetries.limit > 0
        ? '<a href="#retries">Retries</a>'
        : "") +
      '<a href="#trials">Trials</a><a href="#evidence">Trial evidence</a><a href="#inputs">Inputs</a></nav>',
    regradeSection(verdict, linkBase),
    variantsSection(verdict),
    costSection(verdict),
    setupSection(verdict),
    tiersSection(verdict),
    comparisonsSection(verdict),
    flippedSection(verdict, linkBase),
    tasksSection(verdict),
    retriesSection(verdict, trials, linkBase),
    trialsSection(trials),
    '<section id="evidence"><h2>Trial evidence</h2><p class="note">Open a trial to see its grader checks (with their evidence), patch, final report, permission decisions and trace.</p>',
  );
  const tail: string[] = [
    "</section>",
    '<section id="inputs"><h2>Inputs</h2><ul>',
    `<li>manifest <code>${esc(verdict.evidence.manifestHash)}</code></li>`,
    `<li>harness <code>${esc(verdict.evidence.harnessHash)}</code></li>`,
    ...Object.entries(verdict.evidence.fixtureHashes).map(
      ([task, hash]) => `<li>fixture of <code>${esc(task)}</code> <code>${esc(hash)}</code></li>`,
    ),
    `<li>started ${esc(verdict.startedAt)}, finished ${esc(verdict.finishedAt)}${verdict.regradeOf ? `; re-grade of <code>${esc(verdict.regradeOf)}</code>` : ""}</li>`,
    "</ul></section>",
    '<footer class="note">One task is not proof of a general improvement, and agents are nondeterministic: read the interval, not just the status.</footer>',
    "</body></html>",
    "",
  ];
  return {
    head: head.filter((part) => part !== "").join("\n"),
    trials,
    limits,
    evidence: (trial, details) =>
      renderTrialEvidence(trial, details, `${linkBase}${trial.artifactDir}`, limits),
    tail: tail.join("\n"),
  };
}

/** verdict.html: a static, self-contained page (no script, no remote asset, a strict CSP). */
export function renderHtmlReport(
  verdict: VerdictDocument,
  details: ReadonlyMap<string, TrialDetails> = new Map(),
  options: HtmlReportOptions = {},
): string {
  const parts = htmlReportParts(verdict, options);
  return [
    parts.head,
    ...parts.trials.map((t) => parts.evidence(t, details.get(t.artifactDir))),
    parts.tail,
  ].join("\n");
}

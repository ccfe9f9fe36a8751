// One trial's evidence in verdict.html: what happened, earlier attempts, grader checks, the patch
// as a diff, the agent's final report, permission decisions, the trace and stderr. Collapsed by
// default (a run can have hundreds of trials); the trial table links to each by `#trial-<seq>`.
import type { VerdictTrial } from "../artifacts/index.js";
import { describeCheckEvidence } from "./check-evidence.js";
import { byteSize, clipText, clipTextEnd, duration, num, trialTokens, usd } from "./format.js";
import { type DiffLimits, renderDiffHtml } from "./html-diff.js";
import { esc, href } from "./html-text.js";
import { DEFAULT_TRACE_ROWS, excerptOf, renderTraceHtml } from "./html-trace.js";
import type { FileClip, TrialDecision, TrialDetails } from "./types.js";

/** Characters shown of the final report and of stderr.txt. */
const MAX_TEXT = 20_000;
/** Characters shown of a check's detail and of each block of its evidence. */
const MAX_CHECK_TEXT = 4000;
/** Checks listed per trial (a contract can have many). */
const MAX_CHECKS = 200;
/** Characters shown of each field of a permission decision. */
const DECISION_FIELD_CHARS = { tool: 200, inputSummary: 600, decision: 40, rule: 200, reason: 600 };

export interface EvidenceLimits {
  diff: DiffLimits;
  traceRows: number;
  /** Permission decisions shown: the first three quarters and the last quarter of this many. */
  decisionRows: number;
}

/**
 * What one trial may show. A page with hundreds of trials would grow to hundreds of megabytes
 * at full size, so the per-trial share shrinks as trials are added (down to a floor); the clip
 * notes link to the full files.
 */
export function evidenceLimits(trialCount: number): EvidenceLimits {
  const share = (total: number, floor: number, ceiling: number) =>
    Math.max(floor, Math.min(ceiling, Math.floor(total / Math.max(1, trialCount))));
  return {
    diff: { maxLines: share(40_000, 200, 1000), maxLineChars: 500 },
    traceRows: share(16_000, 100, DEFAULT_TRACE_ROWS),
    decisionRows: share(16_000, 100, DEFAULT_TRACE_ROWS),
  };
}

/** A decision with every field cut to what a row shows (a reader keeps no more than that). */
export function clipDecision(d: TrialDecision): TrialDecision {
  return {
    seq: d.seq,
    tool: clipText(d.tool, DECISION_FIELD_CHARS.tool),
    inputSummary: clipText(d.inputSummary, DECISION_FIELD_CHARS.inputSummary),
    decision: clipText(d.decision, DECISION_FIELD_CHARS.decision),
    rule: clipText(d.rule, DECISION_FIELD_CHARS.rule),
    reason: clipText(d.reason, DECISION_FIELD_CHARS.reason),
  };
}

export function trialAnchor(trial: Pick<VerdictTrial, "seq">): string {
  return `trial-${trial.seq}`;
}

export function outcomeBadge(trial: Pick<VerdictTrial, "outcome" | "infraReason">): string {
  const label = trial.outcome === "infrastructure_error" ? "infra error" : trial.outcome;
  const reason = trial.infraReason ? ` <span class="muted">(${esc(trial.infraReason)})</span>` : "";
  return `<span class="outcome o-${trial.outcome}">${esc(label)}</span>${reason}`;
}

function evidenceCell(evidence: unknown): string {
  const view = describeCheckEvidence(evidence);
  if (view === null) return "";
  const blocks = view.blocks.map(
    (b) =>
      `<div class="ev-label">${esc(b.label)}</div><pre class="ev-text">${esc(b.keep === "end" ? clipTextEnd(b.text, MAX_CHECK_TEXT) : clipText(b.text, MAX_CHECK_TEXT))}</pre>`,
  );
  const summary = view.summary === "" ? "evidence" : `evidence: ${esc(view.summary)}`;
  return `<details class="evidence"><summary>${summary}</summary>${blocks.join("")}</details>`;
}

function checksTable(details: TrialDetails): string {
  const unread = details.clips?.validation;
  if (unread !== undefined)
    return `<p class="clip-note">The validation file is ${byteSize(unread.totalBytes)}, too big to be the harness's: its checks are not shown.</p>`;
  if (details.checks.length === 0) return '<p class="muted">No grader checks were recorded.</p>';
  const rows = details.checks
    .slice(0, MAX_CHECKS)
    .map(
      (c) =>
        `<tr><td><code>${esc(clipText(c.grader, 200))}</code></td><td><code>${esc(clipText(c.id, 200))}</code></td><td class="${c.passed ? "pass" : "fail"}">${c.passed ? "pass" : "fail"}</td><td><div class="pre">${esc(clipText(c.detail, MAX_CHECK_TEXT))}</div>${evidenceCell(c.evidence)}</td></tr>`,
    );
  const more =
    details.checks.length > MAX_CHECKS
      ? `<p class="clip-note">${details.checks.length - MAX_CHECKS} more check(s) are in the trial's validation file.</p>`
      : "";
  return `<table class="checks"><thead><tr><th>grader</th><th>check</th><th>result</th><th>detail</th></tr></thead><tbody>${rows.join("")}</tbody></table>${more}`;
}

function decisionRow(raw: TrialDecision): string {
  const d = clipDecision(raw);
  return `<tr${d.decision === "deny" ? ' class="tone-deny"' : ""}><td class="num">${d.seq ?? ""}</td><td><code>${esc(d.tool)}</code></td><td class="pre">${esc(d.inputSummary)}</td><td class="${d.decision === "deny" ? "fail" : "pass"}">${esc(d.decision)}</td><td><code>${esc(d.rule)}</code></td><td>${esc(d.reason)}</td></tr>`;
}

/** The heading's counts: over the whole file, also when only its beginning and end are shown. */
function decisionCounts(details: TrialDetails): { total: number; denied: number } {
  const d = details.decisions;
  if (Array.isArray(d))
    return { total: d.length, denied: d.filter((x) => x.decision === "deny").length };
  return { total: d.total, denied: d.denied };
}

function decisionsTable(details: TrialDetails, maxRows: number, link: string): string {
  const shown = excerptOf(details.decisions, maxRows);
  if (shown.head.length + shown.tail.length + shown.omitted === 0)
    return '<p class="muted">The agent made no tool call the policy had to decide.</p>';
  const gap =
    shown.omitted > 0
      ? `<tr class="gap"><td colspan="6">… ${shown.omitted} more decision(s) in <a href="${link}">permission-decisions.json</a> …</td></tr>`
      : "";
  return `<div class="scroll"><table class="decisions"><thead><tr><th>#</th><th>tool</th><th>input</th><th>decision</th><th>rule</th><th>reason</th></tr></thead><tbody>${shown.head.map(decisionRow).join("")}${gap}${shown.tail.map(decisionRow).join("")}</tbody></table></div>`;
}

/** A text file's beginning as a block, with a note when the file or the block was cut. */
function textBlock(
  className: string,
  text: string,
  name: string,
  link: string,
  clip?: FileClip,
): string {
  const note =
    clip === undefined
      ? ""
      : `<p class="clip-note">${esc(name)} is ${byteSize(clip.totalBytes)}; only its first ${byteSize(clip.readBytes)} were read. The whole file is <a href="${link}">${esc(name)}</a>.</p>`;
  return `<pre class="${className}">${esc(clipText(text, MAX_TEXT))}</pre>${note}`;
}

function attemptsList(trial: VerdictTrial, folder: string): string {
  if (trial.retriedAttempts.length === 0) return "";
  const items = trial.retriedAttempts.map(
    (a) =>
      `<li>attempt ${a.attempt}: <span class="outcome o-infrastructure_error">infra error</span>${a.infraReason ? ` <code>${esc(a.infraReason)}</code>` : ""}: ${esc(a.explanation)} <span class="muted">(${duration(a.durationMs)}, ${usd(a.costUsd)})</span> · <a href="${href(`${folder}/${a.dir}`)}/">${esc(a.dir)}/</a></li>`,
  );
  return `<h4>Earlier attempts (infrastructure errors, retried)</h4><ul class="attempts">${items.join("")}<li>attempt ${trial.retriedAttempts.length + 1} (this one): ${outcomeBadge(trial)}</li></ul>`;
}

/** A forge trial's state files and its writes: what the agent did to the repository. */
function forgeEvidence(forge: NonNullable<TrialDetails["forge"]>, folder: string): string {
  const files = [
    `<a href="${href(`${folder}/forge-before.json`)}">forge-before.json</a>`,
    forge.hasAfter
      ? `<a href="${href(`${folder}/forge-after.json`)}">forge-after.json</a>`
      : '<span class="muted">no state after (not captured)</span>',
    `<a href="${href(`${folder}/forge-write-log.json`)}">forge-write-log.json</a>`,
  ];
  const rows = forge.writes.map(
    (w) =>
      `<tr><td>${esc(w.method)}</td><td><code>${esc(w.path)}</code></td><td>${esc(w.actor ?? "—")}</td><td>${w.status}</td></tr>`,
  );
  const total = forge.totalWrites;
  const more =
    total === null
      ? '<p class="clip-note">The write log is too big to show here; it is in the folder.</p>'
      : total > forge.writes.length
        ? `<p class="clip-note">${total - forge.writes.length} more write(s) are in forge-write-log.json.</p>`
        : "";
  return [
    `<h4>Forge <span class="muted">(state before and after, ${total ?? "?"} write(s))</span></h4>`,
    `<p class="muted links">${files.join(" · ")}</p>`,
    rows.length === 0
      ? '<p class="muted">The agent wrote nothing to the forge.</p>'
      : `<table class="checks"><thead><tr><th>method</th><th>path</th><th>as</th><th>status</th></tr></thead><tbody>${rows.join("")}</tbody></table>${more}`,
  ].join("\n");
}

/** The collapsed evidence block of one trial. `folder` is the link to its folder (linkBase + artifactDir). */
export function renderTrialEvidence(
  trial: VerdictTrial,
  details: TrialDetails | undefined,
  folder: string,
  limits: EvidenceLimits = evidenceLimits(1),
): string {
  const denied = trial.permissionDenials > 0 ? ` · ${trial.permissionDenials} denied` : "";
  const retried =
    trial.retriedAttempts.length > 0 ? ` · ${trial.retriedAttempts.length + 1} attempts` : "";
  const out: string[] = [
    `<details class="trial" id="${trialAnchor(trial)}">`,
    `<summary>${outcomeBadge(trial)} <strong>${esc(trial.task)}</strong> · ${esc(trial.variant)} · trial ${trial.trial} <span class="muted">#${trial.seq} · score ${num(trial.score)} · ${duration(trial.durationMs)} · ${trial.changedFiles.length} changed file(s)${denied}${retried}</span></summary>`,
    '<div class="trial-body">',
    `<p class="explanation">${esc(trial.explanation)}</p>`,
    `<p class="muted links">folder <a href="${href(folder)}/">${esc(trial.artifactDir)}/</a> · <a href="${href(`${folder}/patch.diff`)}">patch.diff</a> · <a href="${href(`${folder}/trace.jsonl`)}">trace.jsonl</a> · <a href="${href(`${folder}/runtime-receipt.json`)}">runtime-receipt.json</a> · tokens in / out ${trialTokens(trial.tokens)} · turns ${trial.turns ?? "—"} · cost ${usd(trial.costUsd)}</p>`,
    attemptsList(trial, folder),
  ];
  if (details === undefined) {
    out.push('<p class="muted">The trial folder was not read for this report.</p></div></details>');
    return out.join("\n");
  }
  const counts = decisionCounts(details);
  const clips = details.clips ?? {};
  out.push("<h4>Grader checks</h4>", checksTable(details));
  if (details.forge !== undefined) out.push(forgeEvidence(details.forge, folder));
  out.push(
    `<h4>Patch${trial.patchRedacted ? ' <span class="muted">(secrets or the trial path were masked in it)</span>' : ""}</h4>`,
    renderDiffHtml(details.patch, href(`${folder}/patch.diff`), limits.diff, clips.patch),
    "<h4>Agent's final report</h4>",
    details.response.trim() === "" && clips.response === undefined
      ? '<p class="muted">(empty)</p>'
      : textBlock(
          "response",
          details.response,
          "response.txt",
          href(`${folder}/response.txt`),
          clips.response,
        ),
    `<h4>Permission decisions <span class="muted">(${counts.total}, ${counts.denied} denied)</span></h4>`,
    decisionsTable(details, limits.decisionRows, href(`${folder}/permission-decisions.json`)),
    "<h4>Trace</h4>",
    renderTraceHtml(details.trace, href(`${folder}/trace.jsonl`), limits.traceRows),
  );
  if (details.stderr.trim() !== "" || clips.stderr !== undefined)
    out.push(
      "<h4>stderr.txt</h4>",
      textBlock("stderr", details.stderr, "stderr.txt", href(`${folder}/stderr.txt`), clips.stderr),
    );
  out.push("</div></details>");
  return out.join("\n");
}

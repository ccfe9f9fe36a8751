// One trial's evidence in verdict.html: what happened, earlier attempts, grader checks, the patch
// as a diff, the agent's final report, permission decisions, the trace and stderr. Collapsed by
// default (a run can have hundreds of trials); the trial table links to each by `#trial-<seq>`.
import type { VerdictTrial } from "../compare/artifacts-contract.js";
import { clipText, duration, num, trialTokens, usd } from "./format.js";
import { type DiffLimits, renderDiffHtml } from "./html-diff.js";
import { esc, href } from "./html-text.js";
import { DEFAULT_TRACE_ROWS, renderTraceHtml } from "./html-trace.js";
import type { TrialDetails } from "./types.js";

/** Characters shown of the final report and of stderr.txt. */
const MAX_TEXT = 20_000;

export interface EvidenceLimits {
  diff: DiffLimits;
  traceRows: number;
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

function checksTable(details: TrialDetails): string {
  if (details.checks.length === 0) return '<p class="muted">No grader checks were recorded.</p>';
  const rows = details.checks.map(
    (c) =>
      `<tr><td><code>${esc(c.grader)}</code></td><td><code>${esc(c.id)}</code></td><td class="${c.passed ? "pass" : "fail"}">${c.passed ? "pass" : "fail"}</td><td class="pre">${esc(clipText(c.detail, 4000))}</td></tr>`,
  );
  return `<table class="checks"><thead><tr><th>grader</th><th>check</th><th>result</th><th>detail</th></tr></thead><tbody>${rows.join("")}</tbody></table>`;
}

function decisionsTable(details: TrialDetails): string {
  if (details.decisions.length === 0)
    return '<p class="muted">The agent made no tool call the policy had to decide.</p>';
  const rows = details.decisions.map(
    (d) =>
      `<tr${d.decision === "deny" ? ' class="tone-deny"' : ""}><td class="num">${d.seq ?? ""}</td><td><code>${esc(d.tool)}</code></td><td class="pre">${esc(clipText(d.inputSummary, 600))}</td><td class="${d.decision === "deny" ? "fail" : "pass"}">${esc(d.decision)}</td><td><code>${esc(d.rule)}</code></td><td>${esc(d.reason)}</td></tr>`,
  );
  return `<div class="scroll"><table class="decisions"><thead><tr><th>#</th><th>tool</th><th>input</th><th>decision</th><th>rule</th><th>reason</th></tr></thead><tbody>${rows.join("")}</tbody></table></div>`;
}

function attemptsList(trial: VerdictTrial, folder: string): string {
  if (trial.retriedAttempts.length === 0) return "";
  const items = trial.retriedAttempts.map(
    (a) =>
      `<li>attempt ${a.attempt}: <span class="outcome o-infrastructure_error">infra error</span>${a.infraReason ? ` <code>${esc(a.infraReason)}</code>` : ""}: ${esc(a.explanation)} <span class="muted">(${duration(a.durationMs)}, ${usd(a.costUsd)})</span> · <a href="${href(`${folder}/${a.dir}`)}/">${esc(a.dir)}/</a></li>`,
  );
  return `<h4>Earlier attempts (infrastructure errors, retried)</h4><ul class="attempts">${items.join("")}<li>attempt ${trial.retriedAttempts.length + 1} (this one): ${outcomeBadge(trial)}</li></ul>`;
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
  const denials = details.decisions.filter((d) => d.decision === "deny").length;
  out.push(
    "<h4>Grader checks</h4>",
    checksTable(details),
    `<h4>Patch${trial.patchRedacted ? ' <span class="muted">(secrets or the trial path were masked in it)</span>' : ""}</h4>`,
    renderDiffHtml(details.patch, href(`${folder}/patch.diff`), limits.diff),
    "<h4>Agent's final report</h4>",
    details.response.trim() === ""
      ? '<p class="muted">(empty)</p>'
      : `<pre class="response">${esc(clipText(details.response, MAX_TEXT))}</pre>`,
    `<h4>Permission decisions <span class="muted">(${details.decisions.length}, ${denials} denied)</span></h4>`,
    decisionsTable(details),
    "<h4>Trace</h4>",
    renderTraceHtml(details.trace, href(`${folder}/trace.jsonl`), limits.traceRows),
  );
  if (details.stderr.trim() !== "")
    out.push(
      "<h4>stderr.txt</h4>",
      `<pre class="stderr">${esc(clipText(details.stderr, MAX_TEXT))}</pre>`,
    );
  out.push("</div></details>");
  return out.join("\n");
}

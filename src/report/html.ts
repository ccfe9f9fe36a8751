import type { VerdictDocument } from "../compare/artifacts-contract.js";
import { duration, levelPercent, num, percent, signedPoints, usd } from "./format.js";

/** What the HTML report shows of one trial beyond verdict.json, read from its folder by the caller. */
export interface TrialDetails {
  patch: string;
  response: string;
  /** Permission decisions: tool, decision, reason. */
  decisions: Array<{ tool: string; decision: string; reason: string; inputSummary?: string }>;
  /** Failed and passed checks per grader. */
  checks: Array<{ grader: string; id: string; passed: boolean; detail: string }>;
}

const MAX_INLINE = 60_000;

function esc(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;");
}

function clip(text: string): string {
  return text.length > MAX_INLINE
    ? `${text.slice(0, MAX_INLINE)}\n… (${text.length - MAX_INLINE} more characters in the trial folder)`
    : text;
}

const STYLE = `
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;max-width:1200px;padding:0 1rem;color:#1d1f23;background:#fff}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}
table{border-collapse:collapse;width:100%;margin:.5rem 0}th,td{border:1px solid #d8dbe0;padding:.3rem .5rem;text-align:left;vertical-align:top}
th{background:#f3f4f6}td.num{text-align:right;font-variant-numeric:tabular-nums}
.status{display:inline-block;padding:.15rem .6rem;border-radius:4px;font-weight:600;color:#fff}
.accept{background:#1a7f37}.reject{background:#cf222e}.need_more_work{background:#9a6700}.infrastructure_error{background:#57606a}
.passed{color:#1a7f37;font-weight:600}.failed{color:#cf222e;font-weight:600}.infrastructure_error-outcome{color:#57606a;font-weight:600}
pre{background:#f6f8fa;border:1px solid #d8dbe0;padding:.5rem;overflow:auto;max-height:28rem;font-size:12px}
details{margin:.3rem 0}summary{cursor:pointer}.muted{color:#57606a}.deny{color:#cf222e}.allow{color:#1a7f37}
code{font-size:12px}
`;

/** verdict.html: a static, self-contained page (no scripts, no remote assets). */
export function renderHtmlReport(
  verdict: VerdictDocument,
  details: ReadonlyMap<string, TrialDetails> = new Map(),
): string {
  const stats = verdict.statistics;
  const out: string[] = [];
  out.push(
    "<!doctype html>",
    '<html lang="en"><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>harnesslab verdict: ${esc(verdict.status)}</title><style>${STYLE}</style></head><body>`,
  );
  out.push(
    `<h1>Verdict <span class="status ${verdict.status}">${esc(verdict.status.replace(/_/g, " "))}</span></h1>`,
    `<p>${esc(verdict.reason)}</p>`,
    `<p class="muted">Host <code>${esc(verdict.host)}</code> · baseline <code>${esc(verdict.baseline)}</code> · ${verdict.tasks.length} task(s) · ${verdict.trialsPerCell} trial(s) per variant and task · policy <code>${esc(stats?.policy.kind ?? "—")}</code> · fixtures unchanged: ${verdict.fixturesUnchanged ? "yes" : "<strong>no</strong>"}</p>`,
  );

  out.push(
    "<h2>Variants</h2><table><thead><tr><th>variant</th><th>composition</th><th>revision</th><th>passed / completed</th><th>pass rate (infra excluded)</th><th>pass rate (infra = fail)</th><th>mean score</th><th>infra errors</th><th>mean cost</th><th>mean duration</th><th>degraded</th></tr></thead><tbody>",
  );
  for (const variant of verdict.variants) {
    const agg = stats?.aggregates.variants.find((v) => v.variant === variant.id);
    out.push(
      `<tr><td>${esc(variant.id)}${variant.isBaseline ? " <em>(baseline)</em>" : ""}</td><td>${esc(variant.composition)}</td><td><code>${esc(variant.revisionId)}</code></td>` +
        `<td class="num">${agg ? `${agg.passed} / ${agg.completed}` : "—"}</td><td class="num">${percent(agg?.passRate.excludingInfra)}</td><td class="num">${percent(agg?.passRate.infraAsFailure)}</td>` +
        `<td class="num">${num(agg?.meanScore)}</td><td class="num">${agg?.infraErrors ?? "—"}</td><td class="num">${usd(agg?.costUsd?.meanPerCompletedTrial)}</td><td class="num">${duration(agg?.duration?.meanMs)}</td>` +
        `<td>${variant.degraded.map((d) => `<code>${esc(d)}</code>`).join(", ") || "—"}</td></tr>`,
    );
  }
  out.push("</tbody></table>");

  if (stats && stats.comparisons.length > 0) {
    out.push(
      "<h2>Comparisons with the baseline</h2><table><thead><tr><th>variant</th><th>status</th><th>difference</th><th>interval</th><th>exact p</th><th>mean score</th><th>cost ratio (USD)</th><th>flipped tasks</th></tr></thead><tbody>",
    );
    for (const c of stats.comparisons) {
      const interval = c.interval
        ? `${signedPoints(c.interval.lower)} to ${signedPoints(c.interval.upper)} <span class="muted">(${levelPercent(c.interval.level)}%, ${esc(c.interval.method)})</span>`
        : "—";
      out.push(
        `<tr><td>${esc(c.variant)}</td><td><span class="status ${c.status}">${esc(c.status.replace(/_/g, " "))}</span></td><td class="num">${signedPoints(c.difference)}</td><td>${interval}</td>` +
          `<td class="num">${num(c.exactPValue, 3)}</td><td class="num">${num(c.meanScore.variant)} vs ${num(c.meanScore.baseline)}</td><td class="num">${num(c.costRatio.usd, 2)}</td>` +
          `<td>${c.flippedTasks.map((f) => esc(f.task)).join(", ") || "none"}</td></tr>`,
      );
    }
    out.push("</tbody></table><ul>");
    for (const c of stats.comparisons)
      out.push(`<li><strong>${esc(c.variant)}</strong>: ${esc(c.reason)}</li>`);
    out.push("</ul>");
  }

  out.push(
    "<h2>Trials</h2><table><thead><tr><th>#</th><th>task</th><th>variant</th><th>trial</th><th>outcome</th><th>score</th><th>explanation</th><th>changed files</th><th>denied calls</th><th>duration</th><th>details</th></tr></thead><tbody>",
  );
  for (const t of verdict.trials) {
    const d = details.get(t.artifactDir);
    const outcomeClass =
      t.outcome === "infrastructure_error" ? "infrastructure_error-outcome" : t.outcome;
    let body = `<p>${esc(t.explanation)}</p><p class="muted">folder <a href="${esc(t.artifactDir)}/">${esc(t.artifactDir)}</a></p>`;
    if (d) {
      if (d.checks.length > 0) {
        body += `<table><thead><tr><th>grader</th><th>check</th><th>result</th><th>detail</th></tr></thead><tbody>${d.checks
          .map(
            (c) =>
              `<tr><td>${esc(c.grader)}</td><td>${esc(c.id)}</td><td class="${c.passed ? "passed" : "failed"}">${c.passed ? "pass" : "fail"}</td><td>${esc(c.detail)}</td></tr>`,
          )
          .join("")}</tbody></table>`;
      }
      body += `<details><summary>patch (${d.patch.length} bytes)</summary><pre>${esc(clip(d.patch)) || "(no change)"}</pre></details>`;
      body += `<details><summary>permission decisions (${d.decisions.length})</summary><table><thead><tr><th>tool</th><th>input</th><th>decision</th><th>reason</th></tr></thead><tbody>${d.decisions
        .map(
          (x) =>
            `<tr><td>${esc(x.tool)}</td><td><code>${esc(x.inputSummary ?? "")}</code></td><td class="${x.decision}">${esc(x.decision)}</td><td>${esc(x.reason)}</td></tr>`,
        )
        .join("")}</tbody></table></details>`;
      body += `<details><summary>agent's final report</summary><pre>${esc(clip(d.response)) || "(empty)"}</pre></details>`;
    }
    out.push(
      `<tr><td class="num">${t.seq}</td><td>${esc(t.task)}</td><td>${esc(t.variant)}</td><td class="num">${t.trial}</td><td class="${outcomeClass}">${esc(t.outcome.replace(/_/g, " "))}${t.infraReason ? ` (${esc(t.infraReason)})` : ""}</td>` +
        `<td class="num">${num(t.score)}</td><td>${esc(t.explanation)}</td><td>${t.changedFiles.map((f) => `<code>${esc(f)}</code>`).join("<br>") || "—"}</td><td class="num">${t.permissionDenials}</td><td class="num">${duration(t.durationMs)}</td>` +
        `<td><details><summary>evidence</summary>${body}</details></td></tr>`,
    );
  }
  out.push("</tbody></table>");
  out.push(
    "<h2>Evidence</h2><ul>",
    `<li>manifest <code>${esc(verdict.evidence.manifestHash)}</code></li>`,
    `<li>harness <code>${esc(verdict.evidence.harnessHash)}</code></li>`,
    ...Object.entries(verdict.evidence.fixtureHashes).map(
      ([task, hash]) => `<li>fixture of <code>${esc(task)}</code> <code>${esc(hash)}</code></li>`,
    ),
    `<li>started ${esc(verdict.startedAt)}, finished ${esc(verdict.finishedAt)}${verdict.regradeOf ? `; re-grade of <code>${esc(verdict.regradeOf)}</code>` : ""}</li>`,
    "</ul>",
    '<p class="muted">One task is not proof of a general improvement, and agents are nondeterministic: read the interval, not just the status.</p>',
    "</body></html>",
    "",
  );
  return out.join("\n");
}

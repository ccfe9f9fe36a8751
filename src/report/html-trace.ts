// A trial's trace.jsonl as a table, one row per event: line, kind, tool, what went in and what
// came out. A long trace keeps its beginning and its end with a note in between.
import { esc } from "./html-text.js";
import { describeTrace, type TraceRow } from "./trace.js";

/** Rows shown per trace: the first three quarters and the last quarter of this many. */
export const DEFAULT_TRACE_ROWS = 400;

function row(r: TraceRow): string {
  const tone = r.tone === null ? "" : ` class="tone-${r.tone}"`;
  const details = [
    r.text === null ? "" : `<div class="say">${esc(r.text)}</div>`,
    r.input === null ? "" : `<div class="in">${esc(r.input)}</div>`,
    r.output === null ? "" : `<div class="out">${esc(r.output)}</div>`,
  ].join("");
  return `<tr${tone}><td class="num">${r.line}</td><td><code>${esc(r.kind)}</code></td><td>${r.tool === null ? "" : `<code>${esc(r.tool)}</code>`}</td><td class="ev">${details}</td></tr>`;
}

/** `traceLink` is the (already escaped) href of the trial's trace.jsonl. */
export function renderTraceHtml(
  jsonl: string,
  traceLink: string,
  maxRows = DEFAULT_TRACE_ROWS,
): string {
  const rows = describeTrace(jsonl);
  if (rows.length === 0) return '<p class="muted">The trace is empty.</p>';
  const out = [
    '<div class="scroll"><table class="trace"><thead><tr><th>line</th><th>event</th><th>tool</th><th>input → output</th></tr></thead><tbody>',
  ];
  if (rows.length <= maxRows) {
    out.push(...rows.map(row));
  } else {
    const head = Math.ceil((maxRows * 3) / 4);
    const tail = maxRows - head;
    out.push(...rows.slice(0, head).map(row));
    out.push(
      `<tr class="gap"><td colspan="4">… ${rows.length - head - tail} event(s) not shown; the full trace is <a href="${traceLink}">trace.jsonl</a> …</td></tr>`,
    );
    out.push(...rows.slice(rows.length - tail).map(row));
  }
  out.push("</tbody></table></div>");
  return out.join("\n");
}

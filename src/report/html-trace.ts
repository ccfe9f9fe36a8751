// A trial's trace.jsonl as a table, one row per event: line, kind, tool, what went in and what
// came out. A long trace keeps its beginning and its end with a note in between.
import { esc } from "./html-text.js";
import { describeTrace, type TraceRow } from "./trace.js";
import type { Excerpt } from "./types.js";

/** Rows shown per trace: the first three quarters and the last quarter of this many. */
export const DEFAULT_TRACE_ROWS = 400;

/** How many of `maxRows` go to the beginning of a long list (the rest to its end). */
export function headShare(maxRows: number): number {
  return Math.ceil((maxRows * 3) / 4);
}

/**
 * The first and last items of `items` within `maxRows`, or of an excerpt already made (a reader
 * that left the middle of a file unread), cut again to `maxRows` if it holds more.
 */
export function excerptOf<T>(items: readonly T[] | Excerpt<T>, maxRows: number): Excerpt<T> {
  const whole = Array.isArray(items)
    ? { head: items as T[], omitted: 0, tail: [] as T[] }
    : (items as Excerpt<T>);
  if (whole.head.length + whole.tail.length <= maxRows) return whole;
  const headRows = headShare(maxRows);
  const tailRows = maxRows - headRows;
  // Rows beyond the share: the head's extra rows, then the tail's, go into the gap.
  const keptHead = whole.head.slice(0, headRows);
  const fromHead = whole.head.slice(headRows);
  const all = [...fromHead, ...whole.tail];
  const keptTail = tailRows > 0 ? all.slice(Math.max(0, all.length - tailRows)) : [];
  return {
    head: keptHead,
    omitted: whole.omitted + all.length - keptTail.length,
    tail: keptTail,
  };
}

function row(r: TraceRow): string {
  const tone = r.tone === null ? "" : ` class="tone-${r.tone}"`;
  const details = [
    r.text === null ? "" : `<div class="say">${esc(r.text)}</div>`,
    r.input === null ? "" : `<div class="in">${esc(r.input)}</div>`,
    r.output === null ? "" : `<div class="out">${esc(r.output)}</div>`,
  ].join("");
  return `<tr${tone}><td class="num">${r.line}</td><td><code>${esc(r.kind)}</code></td><td>${r.tool === null ? "" : `<code>${esc(r.tool)}</code>`}</td><td class="ev">${details}</td></tr>`;
}

/**
 * `trace` is trace.jsonl's text, or the rows a reader kept of a long one; `traceLink` is the
 * (already escaped) href of the trial's trace.jsonl.
 */
export function renderTraceHtml(
  trace: string | Excerpt<TraceRow>,
  traceLink: string,
  maxRows = DEFAULT_TRACE_ROWS,
): string {
  const shown = excerptOf(typeof trace === "string" ? describeTrace(trace) : trace, maxRows);
  if (shown.head.length + shown.tail.length === 0 && shown.omitted === 0)
    return '<p class="muted">The trace is empty.</p>';
  const out = [
    '<div class="scroll"><table class="trace"><thead><tr><th>line</th><th>event</th><th>tool</th><th>input → output</th></tr></thead><tbody>',
    ...shown.head.map(row),
  ];
  if (shown.omitted > 0)
    out.push(
      `<tr class="gap"><td colspan="4">… ${shown.omitted} event(s) not shown; the full trace is <a href="${traceLink}">trace.jsonl</a> …</td></tr>`,
    );
  out.push(...shown.tail.map(row), "</tbody></table></div>");
  return out.join("\n");
}

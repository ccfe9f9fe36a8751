// Turning untrusted text into Markdown that renders as that text: an agent's error message or a
// file name must not become a link, an image, emphasis, code, raw HTML or a new table row in
// verdict.md, in any viewer (GitHub, an editor preview, a static site generator).

/** Characters that end a line somewhere: Markdown itself, or a viewer, an editor, a JS split. */
const LINE_BREAKS = /\r\n|[\n\r\v\f\u0085\u2028\u2029]/g;

/**
 * Inline text, neutralised: line breaks become spaces and leading blanks go (four would start a
 * code block); `&`, `<` and `>` become entities (no raw HTML, no autolink `<…>`, no entity the
 * agent spelled); every punctuation that could open a span, a link, an image or (on GitHub) math
 * is backslash-escaped, and so is the backslash itself (or `\[` would escape our escape). With
 * both brackets escaped no link or image can form, so `(`, `)` and `!` stay as typed: verdict.md
 * is read raw in terminals too.
 * Pipes are left to `mdCell`, which escapes them inside tables.
 */
export function mdText(text: string): string {
  return (
    text
      .replace(LINE_BREAKS, " ")
      .replace(/^[ \t]+/, "")
      .replace(/&/g, "&amp;")
      .replace(/</g, "&lt;")
      .replace(/>/g, "&gt;")
      .replace(/[\\`*_[\]~$]/g, "\\$&")
      // A line that starts with these would become a heading, a list or a quote.
      .replace(/^([#+\-=]|\d+[.)])/, (start) =>
        start.length === 1 ? `\\${start}` : `${start.slice(0, -1)}\\${start.slice(-1)}`,
      )
  );
}

/**
 * A code span around untrusted text: the fence is one backtick longer than the longest run
 * inside it, so no backtick in the text can close it; code spans show `<`, `*` and `[` as typed.
 */
export function mdCode(text: string): string {
  const flat = text.replace(LINE_BREAKS, " ");
  const longest = Math.max(0, ...(flat.match(/`+/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(longest + 1);
  // A space on each side keeps a leading or trailing backtick from joining the fence; Markdown
  // strips one space from each side when both have one, so text spaced both sides gets one more.
  const pad =
    flat.startsWith("`") || flat.endsWith("`") || (flat.startsWith(" ") && flat.endsWith(" "))
      ? " "
      : "";
  return `${fence}${pad}${flat}${pad}${fence}`;
}

/**
 * A table cell from Markdown already made safe (mdText, mdCode, links): a pipe anywhere, code
 * spans included, would end the cell, so it is escaped (GFM unescapes `\|` inside code spans too),
 * and no line break may remain.
 */
export function mdCell(markdown: string): string {
  return markdown.replace(LINE_BREAKS, " ").replace(/\|/g, "\\|");
}

import type { Diagnostic } from "./types.js";

/**
 * `file:line:col: error CODE message`, followed, when the source text is given, by the offending
 * line and a caret under the offending text:
 *
 *     a.harness:3:14: error HL1005 expected "for" after "binding gate", found "pi"
 *         3 | binding gate pi {
 *           |              ^^
 */
export function formatDiagnostic(diagnostic: Diagnostic, sourceText?: string): string {
  const head = printable(
    `${diagnostic.uri}:${diagnostic.line}:${diagnostic.column}: ${diagnostic.severity} ${diagnostic.code} ${diagnostic.message}`,
  );
  if (sourceText === undefined) return head;
  const lineText = sourceLine(sourceText, diagnostic.line);
  if (lineText === undefined) return head;
  const gutter = String(diagnostic.line);
  const blank = " ".repeat(gutter.length);
  const start = Math.min(diagnostic.column - 1, lineText.length);
  const end =
    diagnostic.endLine === diagnostic.line && diagnostic.endColumn !== undefined
      ? Math.min(diagnostic.endColumn - 1, lineText.length)
      : start + 1;
  // Escaped as printed, so the caret still lines up under an escaped character.
  const before = printable(lineText.slice(0, start));
  const marked = printable(lineText.slice(start, end));
  // Keep tabs under tabs so the caret lines up however the terminal renders them.
  const padding = before.replace(/[^\t]/g, " ");
  const carets = "^".repeat(Math.max(1, marked.length));
  return `${head}\n    ${gutter} | ${printable(lineText)}\n    ${blank} | ${padding}${carets}`;
}

/**
 * The text with terminal control characters shown as `\xNN` (tabs kept): a binary or hostile
 * file must not move the cursor, recolour or retitle the terminal it is reported on.
 */
function printable(text: string): string {
  return text.replace(
    /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g,
    (ch) => `\\x${ch.charCodeAt(0).toString(16).padStart(2, "0")}`,
  );
}

function sourceLine(text: string, line: number): string | undefined {
  let start = 0;
  for (let current = 1; current < line; current++) {
    const newline = text.indexOf("\n", start);
    if (newline === -1) return undefined;
    start = newline + 1;
  }
  let end = text.indexOf("\n", start);
  if (end === -1) end = text.length;
  let lineText = text.slice(start, end);
  if (lineText.endsWith("\r")) lineText = lineText.slice(0, -1);
  if (line === 1 && lineText.charCodeAt(0) === 0xfeff) lineText = lineText.slice(1);
  return lineText;
}

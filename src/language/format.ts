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
  const head = `${diagnostic.uri}:${diagnostic.line}:${diagnostic.column}: ${diagnostic.severity} ${diagnostic.code} ${diagnostic.message}`;
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
  // Keep tabs under tabs so the caret lines up however the terminal renders them.
  const padding = lineText.slice(0, start).replace(/[^\t]/g, " ");
  const carets = "^".repeat(Math.max(1, end - start));
  return `${head}\n    ${gutter} | ${lineText}\n    ${blank} | ${padding}${carets}`;
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

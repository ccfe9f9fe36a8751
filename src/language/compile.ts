import type { HarnessIrBundle } from "../ir/index.js";
import { lex } from "./lexer.js";
import { lowerProgram } from "./lower.js";
import { parseTokens } from "./parser.js";
import type { Diagnostic, ParsedFile, RawDiagnostic, SourceInput, SourceReader } from "./types.js";
import { validateProgram } from "./validate.js";

/** The uri of the `index`-th input when the caller passes bare text (the reference's convention). */
function defaultUri(index: number): string {
  return `memory://harness/${index}.harness`;
}

export interface CompileResult {
  /** Present only when no diagnostic is an error. */
  bundle?: HarnessIrBundle;
  /** Sorted by input order, then line, then column. */
  diagnostics: Diagnostic[];
}

/**
 * Compiles `.harness` source: one text, or several files that may refer to each other. Never
 * throws for bad input; every problem is a diagnostic, and no bundle is produced when any
 * diagnostic is an error.
 */
export interface CompileOptions {
  /** Reads components' `source` files (v0.2); without it, a `source` is a diagnostic. */
  readSource?: SourceReader;
}

export function compileHarness(
  input: string | readonly SourceInput[],
  options: CompileOptions = {},
): CompileResult {
  const sources: readonly SourceInput[] =
    typeof input === "string" ? [{ uri: defaultUri(0), text: input }] : input;
  const raw: RawDiagnostic[] = [];
  const files: ParsedFile[] = sources.map((source, index) => ({
    uri: source.uri,
    declarations: parseTokens(lex(source.text, index, raw), index, raw),
  }));
  const model = validateProgram(files, raw, options.readSource);
  const diagnostics = finalizeDiagnostics(raw, sources);
  if (diagnostics.some((d) => d.severity === "error")) return { diagnostics };
  return { bundle: lowerProgram(model), diagnostics };
}

function finalizeDiagnostics(
  raw: readonly RawDiagnostic[],
  sources: readonly SourceInput[],
): Diagnostic[] {
  const ordered = raw
    .map((diagnostic, order) => ({ diagnostic, order }))
    .sort(
      (a, b) =>
        a.diagnostic.span.file - b.diagnostic.span.file ||
        a.diagnostic.span.line - b.diagnostic.span.line ||
        a.diagnostic.span.column - b.diagnostic.span.column ||
        a.order - b.order,
    );
  return ordered.map(({ diagnostic: { span, code, severity, message } }) => ({
    uri: sources[span.file]?.uri ?? defaultUri(span.file),
    line: span.line,
    column: span.column,
    code,
    severity,
    message,
    endLine: span.line,
    endColumn: Math.max(span.endColumn, span.column + 1),
  }));
}

// The language stage's public surface: `.harness` source → diagnostics and an IR bundle.
export { DIAGNOSTIC_CODES, type DiagnosticCode } from "./codes.js";
export { type CompileOptions, type CompileResult, compileHarness } from "./compile.js";
export { formatDiagnostic } from "./format.js";
export { FORGE_PLACEHOLDERS } from "./sources.js";
export type {
  Diagnostic,
  SourceFileRead,
  SourceInput,
  SourceRead,
  SourceReader,
} from "./types.js";

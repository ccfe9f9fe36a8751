// The report stage: pure renderers of a finished run's verdict document.
export {
  type DiffFile,
  type DiffHunk,
  type DiffLine,
  type ParsedDiff,
  parseUnifiedDiff,
} from "./diff.js";
export { renderHtmlReport } from "./html.js";
export {
  type MarkdownReportOptions,
  renderMarkdownReport,
  renderTerminalSummary,
} from "./markdown.js";
export { describeTrace, describeTraceEvent, type TraceRow } from "./trace.js";
export type { HtmlReportOptions, TrialCheck, TrialDecision, TrialDetails } from "./types.js";

// The report stage: pure renderers of a finished run's verdict document.

export { parseUnifiedDiff } from "./diff.js";
export { htmlReportParts, renderHtmlReport } from "./html.js";
export { headShare } from "./html-trace.js";
export { clipDecision, type EvidenceLimits, evidenceLimits } from "./html-trial.js";
export {
  renderMarkdownReport,
  renderTerminalSummary,
} from "./markdown.js";
export { mdCode, mdText } from "./markdown-text.js";
export { formatChangeLine, formatTrialChanges } from "./regrade.js";
export { describeTrace, describeTraceEvent, describeTraceLine, type TraceRow } from "./trace.js";
export type {
  DecisionsExcerpt,
  Excerpt,
  FileClip,
  HtmlReportOptions,
  TrialCheck,
  TrialDecision,
  TrialDetails,
} from "./types.js";

// The report stage: pure renderers of a finished run's verdict document.
export { renderHtmlReport, type TrialDetails } from "./html.js";
export { renderMarkdownReport, renderTerminalSummary } from "./markdown.js";

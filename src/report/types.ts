// What the HTML report shows of one trial beyond verdict.json. The compare stage reads it from
// the trial's folder (every field is untrusted text the agent could influence).

export interface TrialDecision {
  seq: number | null;
  tool: string;
  decision: string;
  rule: string;
  reason: string;
  inputSummary: string;
}

export interface TrialCheck {
  grader: string;
  id: string;
  passed: boolean;
  detail: string;
}

export interface TrialDetails {
  /** patch.diff as written (`git diff --binary`). */
  patch: string;
  /** response.txt: the agent's final report. */
  response: string;
  /** stderr.txt: executor and harness errors. */
  stderr: string;
  /** trace.jsonl as written: one event per line. */
  trace: string;
  /** permission-decisions.json, in call order. */
  decisions: TrialDecision[];
  /** Every grader's checks, passed and failed. */
  checks: TrialCheck[];
}

export interface HtmlReportOptions {
  /**
   * Prefix for links to trial folders, ending in `/`, when the page is not written into the run's
   * folder itself (e.g. `../run/`); empty by default.
   */
  linkBase?: string;
}

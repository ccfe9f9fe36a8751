// What the HTML report shows of one trial beyond verdict.json. The compare stage reads it from
// the trial's folder (every field is untrusted text the agent could influence). A trial's files
// can be huge (an agent can write a 1 GB trace or make 200 000 tool calls), so the reader keeps
// only bounded excerpts and says here what it left out; the renderer clips again, whatever it gets.
import type { TraceRow } from "./trace.js";

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
  /** The check's machine-readable evidence as validation.json has it (a command's output tails, …). */
  evidence?: unknown;
}

/** The first and the last items of a list too long to keep whole, and how many lie between. */
export interface Excerpt<T> {
  head: T[];
  /** Items left out between `head` and `tail`. */
  omitted: number;
  tail: T[];
}

/** permission-decisions.json with more decisions than a page shows. */
export interface DecisionsExcerpt extends Excerpt<TrialDecision> {
  /** Decisions in the file, and how many of them were denials (all of them, shown or not). */
  total: number;
  denied: number;
}

/** A text file read only in part. */
export interface FileClip {
  /** The file's size in bytes. */
  totalBytes: number;
  /** Bytes of its beginning that were read. */
  readBytes: number;
}

export interface TrialDetails {
  /** patch.diff as written (`git diff --binary`), or its beginning (whole lines) when `clips.patch` is set. */
  patch: string;
  /** response.txt: the agent's final report (its beginning when clipped). */
  response: string;
  /** stderr.txt: executor and harness errors (its beginning when clipped). */
  stderr: string;
  /** trace.jsonl as written (one event per line), or its first and last events as table rows. */
  trace: string | Excerpt<TraceRow>;
  /** permission-decisions.json in call order, or its first and last decisions. */
  decisions: TrialDecision[] | DecisionsExcerpt;
  /** Every grader's checks, passed and failed. */
  checks: TrialCheck[];
  /** Forge trials: the writes the forge recorded (the first ones), and whether the state after was captured. */
  forge?: {
    hasAfter: boolean;
    writes: Array<{ method: string; path: string; actor: string | null; status: number }>;
    /** Writes in the log; null when the log was too big to read here. */
    totalWrites: number | null;
  };
  /** Files read only in part (`validation`: not read at all, too big to be the harness's). */
  clips?: { patch?: FileClip; response?: FileClip; stderr?: FileClip; validation?: FileClip };
}

export interface HtmlReportOptions {
  /**
   * Prefix for links to trial folders, ending in `/`, when the page is not written into the run's
   * folder itself (e.g. `../run/`); empty by default.
   */
  linkBase?: string;
}

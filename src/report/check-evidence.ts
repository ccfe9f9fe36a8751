// A grader check's evidence, for a person: why a command grader failed is in its exit code and
// output tails, which validation.json keeps as machine-readable evidence. Pure; never throws on
// odd input (validation.json sits in a folder the agent could have written to).
import { duration } from "./format.js";
import { compactJson } from "./trace.js";

export interface CheckEvidenceView {
  /** One line: `exit code 1 · 1.2 s`, `timed out`, `could not start: …`; empty when nothing to say. */
  summary: string;
  /** Longer texts in the order a reader wants them (stdout, stderr, or the evidence as JSON). */
  blocks: Array<{ label: string; text: string; keep: "start" | "end" }>;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Null when the check has no evidence worth showing. */
export function describeCheckEvidence(evidence: unknown): CheckEvidenceView | null {
  if (evidence === undefined || evidence === null) return null;
  if (
    isObject(evidence) &&
    (typeof evidence.stdoutTail === "string" || typeof evidence.stderrTail === "string")
  ) {
    const facts: string[] = [];
    if (typeof evidence.spawnError === "string")
      facts.push(`could not start: ${evidence.spawnError}`);
    else if (evidence.timedOut === true) facts.push("timed out");
    else if (typeof evidence.signal === "string") facts.push(`killed by ${evidence.signal}`);
    else if (typeof evidence.exitCode === "number") facts.push(`exit code ${evidence.exitCode}`);
    if (typeof evidence.durationMs === "number") facts.push(duration(evidence.durationMs));
    const blocks: CheckEvidenceView["blocks"] = [];
    // The end of a command's output is where the failing assertion or the stack trace is.
    for (const [key, label] of [
      ["stdoutTail", "stdout (end)"],
      ["stderrTail", "stderr (end)"],
    ] as const) {
      const text = evidence[key];
      if (typeof text === "string" && text.trim() !== "") blocks.push({ label, text, keep: "end" });
    }
    if (blocks.length === 0) facts.push("no output");
    return { summary: facts.join(" · "), blocks };
  }
  return {
    summary: "",
    blocks: [{ label: "evidence", text: indentedJson(evidence), keep: "start" }],
  };
}

function indentedJson(value: unknown): string {
  try {
    return JSON.stringify(value, null, 1) ?? String(value);
  } catch {
    return compactJson(value);
  }
}

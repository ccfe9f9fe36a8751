// Pieces of failure classification that several hosts share. Each host keeps its own wording
// tables (every client phrases its errors differently); what is shared is how a table is read,
// the failures Node itself reports, and the outcomes that mean the same on every host. Pure.
import type { InfraReason, ReceiptStatus } from "../receipt.js";

/** How a run ended, as a host's classification decides it. */
export interface RunOutcome {
  status: ReceiptStatus;
  infraReason?: InfraReason;
  error?: string;
}

/** The message of anything thrown (SDKs throw strings and plain objects too). */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return typeof error === "string" ? error : String(error);
}

/** One line of a wording table: text matching `pattern` means `result`. */
export interface TextRule<T> {
  pattern: RegExp;
  result: T;
}

/** The result of the first rule whose pattern matches, or null. Order is the table's priority. */
export function firstMatch<T>(text: string, rules: readonly TextRule<T>[]): T | null {
  for (const rule of rules) if (rule.pattern.test(text)) return rule.result;
  return null;
}

/** A case-insensitive pattern that matches where any of `patterns` matches. */
export function anyOf(...patterns: readonly RegExp[]): RegExp {
  return new RegExp(patterns.map((pattern) => `(?:${pattern.source})`).join("|"), "i");
}

/**
 * Network failures as Node reports them (its errno codes, the resolver, undici's `fetch`). Every
 * Node-based client passes them through in its error text; hosts add their own phrasings.
 */
export const NODE_NETWORK_FAILURE =
  /ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|getaddrinfo|socket hang up|fetch failed/i;

/**
 * An infrastructure cause from an HTTP status of the model API, or null. `hostStatuses` names the
 * statuses one service gives a meaning of its own (Anthropic's 529 "overloaded"); it outranks
 * the generic reading.
 */
export function infraReasonFromHttpStatus(
  status: number | null | undefined,
  hostStatuses: Readonly<Record<number, InfraReason>> = {},
): InfraReason | null {
  if (status === null || status === undefined) return null;
  const own = hostStatuses[status];
  if (own) return own;
  if (status === 401 || status === 403) return "auth_missing";
  if (status === 402) return "quota_exhausted";
  if (status === 429) return "rate_limited";
  if (status >= 500) return "network_unreachable";
  return null;
}

/** How a run stopped from outside: its own budget ran out, or the caller aborted it. */
export type StopCause = "timeout" | "aborted";

/** The outcome of a run stopped from outside; whatever the agent was doing then is moot. */
export function stoppedOutcome(stopped: StopCause, timeoutMs: number): RunOutcome {
  return stopped === "timeout"
    ? { status: "timeout", error: `the agent did not finish within ${timeoutMs} ms` }
    : { status: "aborted", error: "the run was aborted" };
}

/** The client and the harness disagree about the conversation's shape. */
export function protocolMismatch(error: string): RunOutcome {
  return { status: "infra_error", infraReason: "protocol_mismatch", error };
}

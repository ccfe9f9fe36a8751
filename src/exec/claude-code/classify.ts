// How a Claude Code run ended, from the most structured evidence available: the result's
// subtype and terminal reason, the assistant message's error code, the API status, the startup
// failure reason, and only then the error text. Pure.
import type {
  SDKAssistantMessageError,
  SDKResultMessage,
  SDKStartupFailureReason,
  TerminalReason,
} from "@anthropic-ai/claude-agent-sdk";
import type { InfraReason, ReceiptStatus } from "../receipt.js";

/** Error codes Claude Code puts on an assistant message when the API call itself failed. */
const ASSISTANT_ERROR_REASONS: Record<SDKAssistantMessageError, InfraReason | null> = {
  authentication_failed: "auth_missing",
  oauth_org_not_allowed: "auth_missing",
  verification_required: "auth_missing",
  cloud_credential_error: "auth_missing",
  billing_error: "quota_exhausted",
  account_on_hold: "quota_exhausted",
  rate_limit: "rate_limited",
  overloaded: "rate_limited",
  model_not_found: "config_invalid",
  // Decided by status and text below: a dead endpoint, a 5xx, a billing refusal, or the agent's own request.
  server_error: null,
  invalid_request: null,
  unknown: null,
  max_output_tokens: null,
};

const STARTUP_FAILURE_REASONS: Partial<Record<SDKStartupFailureReason, InfraReason>> = {
  gateway_signin_required: "auth_missing",
  gateway_access_denied: "auth_missing",
  org_verify_failed: "auth_missing",
  org_pin_api_key_conflict: "auth_missing",
  shell_tool_missing: "runtime_missing",
  cli_version_too_old: "runtime_missing",
};

/** Network failures as Node and Claude Code word them. */
const NETWORK_TEXT =
  /ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|connection refused|can't reach the api|getaddrinfo|socket hang up|network error|fetch failed/i;
const AUTH_TEXT =
  /not logged in|please run \/login|invalid api key|invalid x-api-key|authentication_error|failed to authenticate|\b401\b/i;
const QUOTA_TEXT =
  /credit balance|billing|quota|out of usage|usage limit|you've hit your|out of extra usage/i;
const RATE_TEXT = /rate limit|rate_limit|\b429\b|overloaded|\b529\b/i;

/** An infrastructure cause named only in text (thrown errors, result text), or null. */
export function infraReasonFromText(text: string): InfraReason | null {
  if (NETWORK_TEXT.test(text)) return "network_unreachable";
  if (AUTH_TEXT.test(text)) return "auth_missing";
  if (QUOTA_TEXT.test(text)) return "quota_exhausted";
  if (RATE_TEXT.test(text)) return "rate_limited";
  return null;
}

/** An infrastructure cause from an HTTP status of the model API, or null. */
export function infraReasonFromStatus(status: number | null | undefined): InfraReason | null {
  if (status === null || status === undefined) return null;
  if (status === 401 || status === 403) return "auth_missing";
  if (status === 402) return "quota_exhausted";
  if (status === 429 || status === 529) return "rate_limited";
  if (status === 404) return "config_invalid";
  if (status >= 500) return "network_unreachable";
  return null;
}

export interface FailureEvidence {
  /** `error` of the last assistant message that carried one. */
  assistantError?: SDKAssistantMessageError | string | null;
  /** Text of that assistant message. */
  assistantText?: string;
  /** HTTP status of the last failed API call (result `api_error_status`, or the last api_retry). */
  apiStatus?: number | null;
  startupFailureReason?: SDKStartupFailureReason | string | null;
  /** The result text / errors or the thrown message. */
  text?: string;
  /** `apiKeySource` of system:init (`none` when Claude Code found no API key). */
  apiKeySource?: string | null;
}

/** The infrastructure cause of a failed run, or null when the failure is the agent's own. */
export function classifyFailure(evidence: FailureEvidence): InfraReason | null {
  const startup = evidence.startupFailureReason;
  if (startup) {
    return STARTUP_FAILURE_REASONS[startup as SDKStartupFailureReason] ?? "config_invalid";
  }
  const code = evidence.assistantError;
  const text = [evidence.assistantText ?? "", evidence.text ?? ""].join("\n");
  if (code) {
    const direct = ASSISTANT_ERROR_REASONS[code as SDKAssistantMessageError];
    if (direct) return direct;
    if (code === "server_error") {
      return infraReasonFromStatus(evidence.apiStatus) ?? "network_unreachable";
    }
    if (code === "invalid_request") {
      return QUOTA_TEXT.test(text) ? "quota_exhausted" : null;
    }
  }
  const fromStatus = infraReasonFromStatus(evidence.apiStatus);
  if (fromStatus) return fromStatus;
  const fromText = infraReasonFromText(text);
  if (fromText) return fromText;
  // An API failure with no key at all is a missing credential whatever the wording.
  if (code && evidence.apiKeySource === "none") return "auth_missing";
  return null;
}

export interface Outcome {
  status: ReceiptStatus;
  infraReason?: InfraReason;
  error?: string;
}

const LIMIT_TERMINAL_REASONS = new Set<TerminalReason | string>([
  "max_turns",
  "budget_exhausted",
  "prompt_too_long",
]);

/** The outcome a result message reports, given what came before it. */
export function outcomeFromResult(result: SDKResultMessage, evidence: FailureEvidence): Outcome {
  const detail =
    result.subtype === "success"
      ? result.result
      : [...(Array.isArray(result.errors) ? result.errors : [])].join("; ");
  if (result.subtype === "success" && !result.is_error) return { status: "completed" };
  if (
    result.subtype === "error_max_turns" ||
    result.subtype === "error_max_budget_usd" ||
    LIMIT_TERMINAL_REASONS.has(result.terminal_reason ?? "")
  ) {
    return {
      status: "limit_reached",
      error: detail || `terminal reason ${result.terminal_reason}`,
    };
  }
  const infraReason = classifyFailure({
    ...evidence,
    apiStatus:
      (result.subtype === "success" ? result.api_error_status : undefined) ?? evidence.apiStatus,
    startupFailureReason:
      (result.subtype !== "success" ? result.startup_failure_reason : undefined) ??
      evidence.startupFailureReason,
    text: detail,
  });
  const error =
    detail ||
    `Claude Code ended with ${result.subtype} (${result.terminal_reason ?? "no terminal reason"})`;
  return infraReason
    ? { status: "infra_error", infraReason, error }
    : { status: "agent_error", error };
}

/** The outcome of an error the SDK threw before any result message. */
export function outcomeFromThrown(
  error: unknown,
  sawInit: boolean,
  evidence: FailureEvidence,
): Outcome {
  const message = error instanceof Error ? error.message : String(error);
  const code =
    error !== null && typeof error === "object" && "code" in error
      ? String((error as { code: unknown }).code)
      : "";
  if (/native binary not found|executable not found|cannot find.*claude/i.test(message)) {
    return { status: "infra_error", infraReason: "binary_missing", error: message };
  }
  if (
    ["EACCES", "ENOEXEC", "EPERM", "ENOENT", "E2BIG"].includes(code) ||
    /failed to launch|spawn/i.test(message)
  ) {
    return {
      status: "infra_error",
      infraReason: code === "ENOENT" ? "binary_missing" : "spawn_failed",
      error: message,
    };
  }
  const fromEvidence = classifyFailure({ ...evidence, text: message });
  if (fromEvidence) return { status: "infra_error", infraReason: fromEvidence, error: message };
  if (/json|parse|unexpected (token|message)|protocol/i.test(message)) {
    return { status: "infra_error", infraReason: "protocol_mismatch", error: message };
  }
  // The Claude Code process died: before it started the session it could not be spawned; after,
  // the host crashed under the agent. Neither is the agent's task outcome.
  return {
    status: "infra_error",
    infraReason: "spawn_failed",
    error: sawInit ? `Claude Code stopped without a result: ${message}` : message,
  };
}

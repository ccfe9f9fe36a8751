// How a Claude Code run ended, from the most structured evidence available: the result's
// subtype and terminal reason, the assistant message's error code, the API status, the startup
// failure reason, and only then the error text. Pure.
import type {
  SDKAssistantMessageError,
  SDKResultMessage,
  SDKStartupFailureReason,
} from "@anthropic-ai/claude-agent-sdk";
import type { InfraReason } from "../receipt.js";
import {
  anyOf,
  errorMessage,
  firstMatch,
  infraReasonFromHttpStatus,
  NODE_NETWORK_FAILURE,
  type RunOutcome,
  type TextRule,
} from "../sdk/classify.js";
import { stoppedAtLimit } from "../sdk/claude-like.js";

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

/** Also read on its own: an invalid request that names billing is a refused payment. */
const QUOTA_TEXT =
  /credit balance|billing|quota|out of usage|usage limit|you've hit your|out of extra usage/i;

const STARTUP_FAILURE_REASONS: Partial<Record<SDKStartupFailureReason, InfraReason>> = {
  gateway_signin_required: "auth_missing",
  gateway_access_denied: "auth_missing",
  org_verify_failed: "auth_missing",
  org_pin_api_key_conflict: "auth_missing",
  shell_tool_missing: "runtime_missing",
  cli_version_too_old: "runtime_missing",
};

/** Failures as Claude Code words them, in order of priority. */
const TEXT_RULES: readonly TextRule<InfraReason>[] = [
  {
    pattern: anyOf(NODE_NETWORK_FAILURE, /connection refused|can't reach the api|network error/i),
    result: "network_unreachable",
  },
  {
    pattern:
      /not logged in|please run \/login|invalid api key|invalid x-api-key|authentication_error|failed to authenticate|\b401\b/i,
    result: "auth_missing",
  },
  { pattern: QUOTA_TEXT, result: "quota_exhausted" },
  { pattern: /rate limit|rate_limit|\b429\b|overloaded|\b529\b/i, result: "rate_limited" },
];

/** An infrastructure cause named only in text (thrown errors, result text), or null. */
function infraReasonFromText(text: string): InfraReason | null {
  return firstMatch(text, TEXT_RULES);
}

/** Anthropic answers 529 when it is overloaded; a 404 names a model it does not serve. */
const ANTHROPIC_STATUSES: Readonly<Record<number, InfraReason>> = {
  529: "rate_limited",
  404: "config_invalid",
};

/** An infrastructure cause from an HTTP status of the model API, or null. */
function infraReasonFromStatus(status: number | null | undefined): InfraReason | null {
  return infraReasonFromHttpStatus(status, ANTHROPIC_STATUSES);
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
function classifyFailure(evidence: FailureEvidence): InfraReason | null {
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

/** The outcome a result message reports, given what came before it. */
export function outcomeFromResult(result: SDKResultMessage, evidence: FailureEvidence): RunOutcome {
  const detail =
    result.subtype === "success"
      ? result.result
      : [...(Array.isArray(result.errors) ? result.errors : [])].join("; ");
  if (result.subtype === "success" && !result.is_error) return { status: "completed" };
  if (stoppedAtLimit(result)) {
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
): RunOutcome {
  const message = errorMessage(error);
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

// How a Qoder run ended, from the most structured evidence first: the SDK error's `code` and
// class name, the result's subtype and terminal reason, the assistant message's error code, the
// HTTP status of API retries, and only then the wording of errors and the CLI's stderr. Pure.
import type { SDKAssistantMessageError, SDKResultMessage } from "@qoder-ai/qoder-agent-sdk";
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
import { type AssistantErrorEvidence, stoppedAtLimit } from "../sdk/claude-like.js";

/** What the run showed besides the result or the thrown error. */
export interface QoderEvidence extends AssistantErrorEvidence {
  /** `error` and `error_status` of the last `system:api_retry`. */
  retryError?: string | null;
  retryStatus?: number | null;
  /** The CLI's stderr, as much as was kept. */
  stderr?: string;
}

/** `code` values the SDK puts on its errors, and what they mean for the run. */
const ERROR_CODES: Record<string, InfraReason> = {
  auth_not_configured: "auth_missing",
  auth_access_token_env_var_not_configured: "auth_missing",
  auth_service_account_env_var_not_configured: "auth_missing",
  cloud_agent_auth_requires_access_token: "auth_missing",
};

/** Error classes of the SDK (their `name`), for errors without a `code`. */
const ERROR_NAMES: Record<string, InfraReason> = {
  AuthNotConfiguredError: "auth_missing",
  AuthAccessTokenEnvVarError: "auth_missing",
  AuthServiceAccountEnvVarError: "auth_missing",
  ProtocolVersionMismatchError: "protocol_mismatch",
  UnsupportedCliCapabilityError: "protocol_mismatch",
  FrameTooLargeError: "protocol_mismatch",
};

const ASSISTANT_ERROR_REASONS: Record<SDKAssistantMessageError, InfraReason | null> = {
  authentication_failed: "auth_missing",
  billing_error: "quota_exhausted",
  rate_limit: "rate_limited",
  // Decided by the status and the wording: a dead endpoint, an overloaded service, or the agent's own request.
  server_error: null,
  invalid_request: null,
  unknown: null,
  max_output_tokens: null,
};

/** Failures as Qoder words them, in order of priority. */
const TEXT_RULES: readonly TextRule<InfraReason>[] = [
  {
    // qodercli: `NetworkAttemptError: Network attempt failed at dns`.
    pattern: anyOf(
      NODE_NETWORK_FAILURE,
      /NetworkAttemptError|network attempt failed|network error|connection refused/i,
    ),
    result: "network_unreachable",
  },
  {
    pattern:
      /no qodercli login found|qodercli login|not logged in|unauthori[sz]ed|\b401\b|invalid (?:personal )?access token|invalid token|token (?:has )?expired|authentication (?:failed|required)|auth_required|auth_error|login required/i,
    result: "auth_missing",
  },
  {
    pattern:
      /quota|insufficient (?:credits?|balance)|credits? (?:exhausted|exceeded|insufficient)|out of credits|billing|\b402\b/i,
    result: "quota_exhausted",
  },
  { pattern: /rate.?limit|too many requests|\b429\b/i, result: "rate_limited" },
];
const RUNTIME_MISSING_TEXT = /runtime not found|cannot find (?:the )?qoder|not installed/i;

/** An infrastructure cause named only in text, or null. */
function infraReasonFromText(text: string): InfraReason | null {
  return firstMatch(text, TEXT_RULES);
}

function field(error: unknown, name: string): unknown {
  if (error === null || typeof error !== "object") return undefined;
  try {
    return (error as Record<string, unknown>)[name];
  } catch {
    return undefined;
  }
}

function text(value: unknown): string {
  return typeof value === "string" ? value : "";
}

/** The infrastructure cause of a failed run from its side evidence, or null. */
function fromEvidence(evidence: QoderEvidence, extraText: string): InfraReason | null {
  const code = evidence.assistantError;
  if (code) {
    const direct = ASSISTANT_ERROR_REASONS[code as SDKAssistantMessageError];
    if (direct) return direct;
  }
  const retry = evidence.retryError;
  if (retry) {
    const direct = ASSISTANT_ERROR_REASONS[retry as SDKAssistantMessageError];
    if (direct) return direct;
  }
  const fromStatus = infraReasonFromHttpStatus(evidence.retryStatus);
  if (fromStatus) return fromStatus;
  // The error's own words outrank the CLI's stderr, which also logs retries and side requests.
  const fromText =
    infraReasonFromText(`${extraText}\n${evidence.assistantText ?? ""}`) ??
    infraReasonFromText(evidence.stderr ?? "");
  if (fromText) return fromText;
  if (code === "server_error") return "network_unreachable";
  return null;
}

/** The stderr line that names why the CLI failed, if one does. */
function stderrCause(stderr: string): string | null {
  const lines = stderr
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== "");
  return (
    lines.find((line) => infraReasonFromText(line) !== null) ??
    lines.find((line) => /error/i.test(line) && !line.startsWith("at ")) ??
    null
  );
}

/**
 * What a thrown SDK error means. `sawInit` tells whether the CLI came up: an unknown error before
 * that is the environment's, after it the agent's run broke.
 */
export function outcomeFromThrown(
  error: unknown,
  sawInit: boolean,
  evidence: QoderEvidence,
): RunOutcome {
  const message = errorMessage(error);
  const code = text(field(error, "code"));
  const name = text(field(error, "name"));
  const errorStderr = text(field(error, "stderr"));
  const detail = [message, errorStderr, evidence.stderr ?? ""].join("\n");
  const stderr = `${evidence.stderr ?? ""}\n${errorStderr}`;
  const infra = (infraReason: InfraReason): RunOutcome => ({
    status: "infra_error",
    infraReason,
    error: message,
  });

  const byCode = ERROR_CODES[code];
  if (byCode) return infra(byCode);
  if (code === "QODER_WORKER_RUNTIME_ERROR" || name === "QoderWorkerRuntimeError") {
    if (RUNTIME_MISSING_TEXT.test(detail)) return infra("runtime_missing");
    return infra(infraReasonFromText(detail) ?? "spawn_failed");
  }
  if (code === "QODER_CLI_PROCESS_ERROR" || name === "QoderCliProcessError") {
    // The CLI died: its stderr says why (a failed DNS lookup, a rejected token…).
    const reason = fromEvidence({ ...evidence, stderr }, message);
    const cause = stderrCause(stderr);
    return {
      status: "infra_error",
      infraReason: reason ?? "spawn_failed",
      error: cause === null ? message : `${message}: ${cause}`,
    };
  }
  const byName = ERROR_NAMES[name];
  if (byName) return infra(byName);
  const reason = fromEvidence({ ...evidence, stderr }, message);
  if (reason) return infra(reason);
  if (!sawInit) return infra("spawn_failed");
  return { status: "agent_error", error: `the Qoder SDK threw: ${message}` };
}

/** What the result message says about the run. */
export function outcomeFromResult(result: SDKResultMessage, evidence: QoderEvidence): RunOutcome {
  const errors = result.subtype === "success" ? [] : (result.errors ?? []);
  const resultText = result.subtype === "success" ? result.result : errors.join("\n");
  if (result.subtype === "success" && !result.is_error) return { status: "completed" };
  if (stoppedAtLimit(result)) {
    return {
      status: "limit_reached",
      error: `the run stopped at a limit (${result.terminal_reason ?? result.subtype})${resultText ? `: ${resultText}` : ""}`,
    };
  }
  const reason = fromEvidence(evidence, resultText);
  const error =
    resultText ||
    `the run ended with ${result.subtype} (${result.terminal_reason ?? "no terminal reason"})`;
  if (reason) return { status: "infra_error", infraReason: reason, error };
  return { status: "agent_error", error };
}

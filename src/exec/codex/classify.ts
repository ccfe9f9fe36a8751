// Judging Codex failures (pure). `codex exec` reports failures only as text (`turn.failed`,
// `error` events, the exit message), so the classification keys on the stable parts of those
// texts: HTTP statuses, the CLI's own phrases, and OS error codes.
import type { InfraReason, ReceiptStatus } from "../receipt.js";
import { firstMatch, type TextRule } from "../sdk/classify.js";

export type CodexFailure =
  | { status: "infra_error"; infraReason: InfraReason }
  | { status: Exclude<ReceiptStatus, "infra_error" | "completed"> };

const RULES: readonly TextRule<CodexFailure>[] = [
  // The provider's key variable is unset: the credential was never given.
  {
    pattern: /Missing environment variable/i,
    result: { status: "infra_error", infraReason: "auth_missing" },
  },
  {
    pattern:
      /\b401\b|\b403\b|Unauthorized|invalid_api_key|Incorrect API key|not logged in|authentication (failed|required)/i,
    result: { status: "infra_error", infraReason: "auth_missing" },
  },
  // Before 429: an exhausted quota is also answered with status 429.
  {
    pattern: /quota|insufficient_quota|billing/i,
    result: { status: "infra_error", infraReason: "quota_exhausted" },
  },
  {
    pattern: /\b429\b|rate.?limit|Too Many Requests/i,
    result: { status: "infra_error", infraReason: "rate_limited" },
  },
  // The service answered but refused capacity (overload, 5xx): not the agent's doing.
  {
    pattern:
      /high demand|overloaded|\b50[0-4]\b|Internal Server Error|Service Unavailable|Bad Gateway/i,
    result: { status: "infra_error", infraReason: "rate_limited" },
  },
  {
    pattern: /context.?(length|window)|maximum context|too many tokens/i,
    result: { status: "limit_reached" },
  },
  {
    pattern: /Unable to locate Codex CLI binaries|ENOENT|No such file or directory/i,
    result: { status: "infra_error", infraReason: "binary_missing" },
  },
  {
    pattern: /EACCES|EPERM|Exec format error|permission denied \(os error/i,
    result: { status: "infra_error", infraReason: "spawn_failed" },
  },
  {
    pattern:
      /error sending request|Connection (refused|failed|reset)|failed to lookup address|dns error|stream disconnected|waiting for network|network is unreachable|timed out/i,
    result: { status: "infra_error", infraReason: "network_unreachable" },
  },
  {
    pattern: /model .*(not found|does not exist|not supported)|unknown model|model_not_found/i,
    result: { status: "infra_error", infraReason: "config_invalid" },
  },
  {
    pattern:
      /config\.toml|invalid configuration|Error loading config|unknown variant|invalid type/i,
    result: { status: "infra_error", infraReason: "config_invalid" },
  },
  {
    pattern: /\b(400|404|405|415|422)\b|Failed to parse item|unexpected argument|unrecognized/i,
    result: { status: "infra_error", infraReason: "protocol_mismatch" },
  },
];

/** The receipt status for a failure message; an unrecognized failure is the agent's own error. */
export function classifyCodexFailure(message: string): CodexFailure {
  return firstMatch(message, RULES) ?? { status: "agent_error" };
}

const RECONNECT = /^\s*Reconnecting\.\.\./i;

/**
 * What a `Reconnecting...` error event says: not a reconnect at all, a reconnect after a
 * network failure (the endpoint is unreachable), or a retry after an answer (401, 429, 5xx) that
 * Codex's bounded retries will settle with a `turn.failed`.
 */
export function reconnectKind(message: string): "none" | "network" | "answered" {
  if (!RECONNECT.test(message)) return "none";
  const failure = classifyCodexFailure(message.replace(RECONNECT, ""));
  if (/waiting for network/i.test(message)) return "network";
  return failure.status === "infra_error" && failure.infraReason === "network_unreachable"
    ? "network"
    : "answered";
}

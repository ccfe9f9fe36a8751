// What a Pi error message says about its cause. Pure.
import type { InfraReason } from "../receipt.js";
import { anyOf, firstMatch, NODE_NETWORK_FAILURE, type TextRule } from "../sdk/classify.js";

/**
 * Failures as Pi's Anthropic client words them (`401 …`, `Connection error.`), in order of
 * priority. Pi reports only text, so statuses are read from it too.
 */
const TEXT_RULES: readonly TextRule<InfraReason>[] = [
  {
    pattern: /no api key|authentication_error|invalid x-api-key|invalid api key|\b401\b|\b403\b/i,
    result: "auth_missing",
  },
  { pattern: anyOf(NODE_NETWORK_FAILURE, /connection error/i), result: "network_unreachable" },
  { pattern: /credit balance|billing|quota|\b402\b/i, result: "quota_exhausted" },
  { pattern: /rate.?limit|\b429\b|overloaded|\b529\b/i, result: "rate_limited" },
  { pattern: /not_found_error|model.*not found|\b404\b/i, result: "config_invalid" },
  { pattern: /\b5\d\d\b|internal server error|api_error/i, result: "network_unreachable" },
];

/** The infrastructure cause named by a Pi error message, or null when the failure is the agent's. */
export function piInfraReason(text: string): InfraReason | null {
  return firstMatch(text, TEXT_RULES);
}

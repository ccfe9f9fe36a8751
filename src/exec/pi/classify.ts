// What a Pi error message says about its cause. Pure.
import type { InfraReason } from "../receipt.js";

const NETWORK_TEXT =
  /connection error|ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|fetch failed|socket hang up|getaddrinfo/i;

/** The infrastructure cause named by a Pi error message, or null when the failure is the agent's. */
export function piInfraReason(text: string): InfraReason | null {
  if (
    /no api key|authentication_error|invalid x-api-key|invalid api key|\b401\b|\b403\b/i.test(text)
  ) {
    return "auth_missing";
  }
  if (NETWORK_TEXT.test(text)) return "network_unreachable";
  if (/credit balance|billing|quota|\b402\b/i.test(text)) return "quota_exhausted";
  if (/rate.?limit|\b429\b|overloaded|\b529\b/i.test(text)) return "rate_limited";
  if (/not_found_error|model.*not found|\b404\b/i.test(text)) return "config_invalid";
  if (/\b5\d\d\b|internal server error|api_error/i.test(text)) return "network_unreachable";
  return null;
}

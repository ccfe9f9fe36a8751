// Cost-equivalent tokens (pure): a run's four token components weighted by what the host's model
// API charges for each relative to uncached input, so runs that cache differently compare on one
// number (as the forge benchmark behind seed 000 reports them), next to the raw counts.
import type { HostId } from "./types.js";

/** Price of each token component relative to one uncached input token. */
interface TokenPriceRatios {
  cacheRead: number;
  cacheWrite: number;
  output: number;
  /** Where the ratios come from, for reports. */
  source: string;
}

/**
 * Anthropic prices every current model (Haiku, Sonnet, Opus 4.x) at output 5×, five-minute cache
 * writes 1.25× and cache reads 0.1× of input; OpenAI's GPT-5 family at output 8× and cached input
 * 0.1×, with no separate cache-write price. Reasoning tokens are billed (and counted) as output by
 * both. Qoder bills in credits and publishes no per-token ratios; scripted runs have no tokens.
 */
const TOKEN_PRICE_RATIOS: Readonly<Partial<Record<HostId, TokenPriceRatios>>> = {
  "claude-code": {
    cacheRead: 0.1,
    cacheWrite: 1.25,
    output: 5,
    source: "Anthropic list prices (input 1, cache read 0.1, cache write 1.25, output 5)",
  },
  pi: {
    cacheRead: 0.1,
    cacheWrite: 1.25,
    output: 5,
    source: "Anthropic list prices (input 1, cache read 0.1, cache write 1.25, output 5)",
  },
  codex: {
    cacheRead: 0.1,
    cacheWrite: 1,
    output: 8,
    source: "OpenAI GPT-5 list prices (input 1, cached input 0.1, output 8)",
  },
};

/** The token counts a receipt reports (null where the host reports nothing). */
export interface TokenCounts {
  uncachedInput: number | null;
  cacheRead: number | null;
  cacheWrite: number | null;
  output: number | null;
}

/**
 * uncachedInput + cacheRead·r + cacheWrite·w + output·o, rounded to a whole token; null when the
 * host has no ratios or reported no tokens (a component it does not report counts as 0).
 */
export function costEquivalentTokens(host: HostId, tokens: TokenCounts | null): number | null {
  const ratios = TOKEN_PRICE_RATIOS[host];
  if (ratios === undefined || tokens === null) return null;
  const parts = [tokens.uncachedInput, tokens.cacheRead, tokens.cacheWrite, tokens.output];
  if (parts.every((part) => part === null)) return null;
  return Math.round(
    (tokens.uncachedInput ?? 0) +
      (tokens.cacheRead ?? 0) * ratios.cacheRead +
      (tokens.cacheWrite ?? 0) * ratios.cacheWrite +
      (tokens.output ?? 0) * ratios.output,
  );
}

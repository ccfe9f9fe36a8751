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

/**
 * List price of one million uncached input tokens in USD, by model, as each provider published
 * it on 2025-11-30 (Anthropic's and OpenAI's pricing pages). With the ratios above it prices a
 * run's cost-equivalent tokens when its host reports no USD (Codex reports tokens only). A dated
 * snapshot of a model (`claude-sonnet-4-5-20250929`) has its model's price; any other model has
 * none, and its cost is not comparable in USD.
 */
const INPUT_USD_PER_MILLION: Readonly<Record<string, number>> = {
  "claude-opus-4-5": 5,
  "claude-opus-4-1": 15,
  "claude-opus-4": 15,
  "claude-sonnet-4-5": 3,
  "claude-sonnet-4": 3,
  "claude-3-7-sonnet": 3,
  "claude-haiku-4-5": 1,
  "claude-3-5-haiku": 0.8,
  "gpt-5": 1.25,
  "gpt-5-codex": 1.25,
  "gpt-5.1": 1.25,
  "gpt-5.1-codex": 1.25,
  "gpt-5-mini": 0.25,
  "gpt-5.1-codex-mini": 0.25,
  "gpt-5-nano": 0.05,
};

/** The list price per million input tokens of a model, or null when the table has none. */
export function inputPricePerMillion(model: string): number | null {
  const exact = INPUT_USD_PER_MILLION[model];
  if (exact !== undefined) return exact;
  const dated = /^(.+)-\d{8}$/.exec(model);
  return dated?.[1] === undefined ? null : (INPUT_USD_PER_MILLION[dated[1]] ?? null);
}

/**
 * USD a run would cost at list prices: its cost-equivalent tokens × the model's input price.
 * Null when either is unknown (a host without token ratios, no tokens, a model not in the table).
 */
export function estimatedCostUsd(
  model: string | undefined,
  costEquivalent: number | null,
): number | null {
  if (model === undefined || costEquivalent === null) return null;
  const price = inputPricePerMillion(model);
  return price === null ? null : (costEquivalent * price) / 1_000_000;
}

// Number formatting for reason texts: the only place values are rounded.
import { nearlyEqual } from "./tolerance.js";

export function formatRate(value: number | null): string {
  return value === null ? "n/a" : value.toFixed(2);
}

/** A difference with its sign always shown, so "+0.00" and "-0.00" still tell the side of 0. */
export function formatSigned(value: number): string {
  return `${value < 0 || Object.is(value, -0) ? "-" : "+"}${Math.abs(value).toFixed(2)}`;
}

export function formatScore(value: number | null): string {
  return value === null ? "n/a" : value.toFixed(1);
}

/** "95%", "97.5%": the confidence level as people write it. */
export function formatLevel(level: number): string {
  return `${Number((level * 100).toFixed(4))}%`;
}

/**
 * A ratio next to the limit it is checked against, with enough decimals that a ratio just
 * over the limit does not print as equal to it (1.2504 > 1.25, not 1.25 > 1.25).
 */
export function formatRatio(ratio: number, limit: number): string {
  if (nearlyEqual(ratio, limit)) return limit.toFixed(2);
  for (let digits = 2; digits < 8; digits++) {
    const shown = ratio.toFixed(digits);
    if (shown !== limit.toFixed(digits)) return shown;
  }
  return ratio.toPrecision(12);
}

/** A policy limit as written: 1.25 → "1.25", 2 → "2.00", 1.125 → "1.125". */
export function formatLimit(limit: number): string {
  const shown = limit.toFixed(2);
  return Number(shown) === limit ? shown : String(limit);
}

export function plural(count: number, singular: string, pluralForm = `${singular}s`): string {
  return `${count} ${count === 1 ? singular : pluralForm}`;
}

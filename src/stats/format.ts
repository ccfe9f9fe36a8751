// Number formatting for reason texts: the only place values are rounded.
import { nearlyEqual } from "./tolerance.js";

export function formatRate(value: number | null): string {
  return value === null ? "n/a" : value.toFixed(2);
}

/** A difference with its sign always shown, so "+0.00" and "-0.00" still tell the side of 0. */
export function formatSigned(value: number): string {
  return `${value < 0 || Object.is(value, -0) ? "-" : "+"}${Math.abs(value).toFixed(2)}`;
}

/**
 * An interval limit: exactly 0 as "0", otherwise signed with two decimals, or as many more as
 * it takes for a limit off 0 not to read as 0 (+0.003, -0.0004): a lower limit above 0 never
 * shows as "+0.00".
 */
export function formatBound(value: number): string {
  if (value === 0) return "0";
  let digits = 2;
  while (digits < 12 && Math.abs(value) < 0.5 * 10 ** -digits) digits++;
  return `${value < 0 ? "-" : "+"}${Math.abs(value).toFixed(digits)}`;
}

/**
 * A p-value next to the level it is compared with, with enough significant digits that one
 * just over the level does not print as equal to it (0.0502 > 0.05, not 0.05 > 0.05).
 */
export function formatP(p: number, level: number): string {
  if (p === 0) return "0";
  for (let digits = 2; digits < 12; digits++) {
    const shown = Number(p.toPrecision(digits));
    const limit = Number(level.toPrecision(digits));
    if (shown !== limit || p === level) return String(shown);
  }
  return String(p);
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

// Small number/text formatters shared by the renderers.

export function percent(rate: number | null | undefined, digits = 0): string {
  return rate === null || rate === undefined ? "—" : `${(rate * 100).toFixed(digits)}%`;
}

export function signedPoints(value: number | null | undefined): string {
  if (value === null || value === undefined) return "—";
  const points = value * 100;
  return `${points >= 0 ? "+" : ""}${points.toFixed(1)} pts`;
}

export function num(value: number | null | undefined, digits = 1): string {
  return value === null || value === undefined ? "—" : value.toFixed(digits);
}

export function usd(value: number | null | undefined): string {
  return value === null || value === undefined ? "—" : `$${value.toFixed(value < 0.1 ? 4 : 2)}`;
}

export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "—";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 120) return `${s.toFixed(1)} s`;
  return `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
}

/** Escapes text for a Markdown table cell. */
export function cell(text: string): string {
  return text.replace(/\|/g, "\\|").replace(/\r?\n/g, " ");
}

/** A confidence level in percent (no sign), exact enough to tell 97.5 from 98.3333 (Bonferroni-adjusted levels). */
export function levelPercent(level: number): string {
  return String(Number((level * 100).toFixed(4)));
}

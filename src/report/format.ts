// Small number/text formatters shared by the renderers.
import type { VerdictDocument, VerdictTrial } from "../artifacts/index.js";

export function percent(rate: number | null | undefined, digits = 0): string {
  return rate === null || rate === undefined ? "—" : `${(rate * 100).toFixed(digits)}%`;
}

/**
 * A difference in percentage points, signed, with one decimal or as many more as it takes for a
 * value off 0 not to read as 0 (+0.03 pts): a lower limit above 0 never shows as "+0.0".
 */
export function signedPoints(value: number | null | undefined): string {
  if (value === null || value === undefined) return "—";
  if (value === 0) return "0 pts";
  const points = value * 100;
  let digits = 1;
  while (digits < 10 && Math.abs(points) < 0.5 * 10 ** -digits) digits++;
  return `${points > 0 ? "+" : "-"}${Math.abs(points).toFixed(digits)} pts`;
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

/** A confidence level in percent (no sign), exact enough to tell 97.5 from 98.3333 (Bonferroni-adjusted levels). */
export function levelPercent(level: number): string {
  return String(Number((level * 100).toFixed(4)));
}

/** A pass-rate interval as `[4%–62%]`; `—` when there is none. */
export function rateInterval(
  interval: { lower: number; upper: number } | null | undefined,
): string {
  if (interval === null || interval === undefined) return "—";
  return `[${percent(interval.lower)}–${percent(interval.upper)}]`;
}

/** A token count for a table: `950`, `12.3k`, `4.56M`. */
export function tokenCount(value: number | null | undefined): string {
  if (value === null || value === undefined) return "—";
  if (value < 1000) return String(Math.round(value));
  if (value < 1_000_000) return `${(value / 1000).toFixed(value < 10_000 ? 2 : 1)}k`;
  return `${(value / 1_000_000).toFixed(2)}M`;
}

const CLIP_NOTE = /… \(\d+ more characters\)$/;

/**
 * Shortens text to `max` characters, saying how much was left out. Text it already shortened to
 * `max` is left as it is (a reader clips what it keeps, the renderer clips whatever it gets).
 */
export function clipText(text: string, max: number): string {
  if (text.length <= max) return text;
  const note = CLIP_NOTE.exec(text);
  if (note !== null && note.index <= max) return text;
  return `${text.slice(0, max)}… (${text.length - max} more characters)`;
}

/** Keeps the last `max` characters (where a command's error usually is), saying how much was left out. */
export function clipTextEnd(text: string, max: number): string {
  if (text.length <= max) return text;
  return `(${text.length - max} earlier characters) …${text.slice(text.length - max)}`;
}

/** A file size: `950 bytes`, `12.3 KB`, `4.56 MB` (powers of 1024). */
export function byteSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 ** 2).toFixed(2)} MB`;
  return `${(bytes / 1024 ** 3).toFixed(2)} GB`;
}

const STATUS_LABELS = {
  accept: "ACCEPT",
  reject: "REJECT",
  need_more_work: "NEED MORE WORK",
  infrastructure_error: "INFRASTRUCTURE ERROR",
} as const;

/** `need_more_work` → `NEED MORE WORK`. */
export function statusLabel(status: keyof typeof STATUS_LABELS): string {
  return STATUS_LABELS[status];
}

/** A trial's tokens as `in / out` (input counts cache reads and writes); `—` when not reported. */
export function trialTokens(
  tokens: {
    uncachedInput: number | null;
    cacheRead: number | null;
    cacheWrite: number | null;
    output: number | null;
  } | null,
): string {
  if (tokens === null) return "—";
  const parts = [tokens.uncachedInput, tokens.cacheRead, tokens.cacheWrite];
  const input = parts.every((p) => p === null)
    ? null
    : parts.reduce<number>((a, b) => a + (b ?? 0), 0);
  if (input === null && tokens.output === null) return "—";
  return `${tokenCount(input)} / ${tokenCount(tokens.output)}`;
}

/** Trials grouped as a reader looks for them: by task, then variant (manifest order), then trial. */
export function readingOrder(verdict: VerdictDocument): VerdictTrial[] {
  const taskIndex = new Map(verdict.tasks.map((t, i) => [t, i]));
  const variantIndex = new Map(verdict.variants.map((v, i) => [v.id, i]));
  return [...verdict.trials].sort(
    (a, b) =>
      (taskIndex.get(a.task) ?? 0) - (taskIndex.get(b.task) ?? 0) ||
      (variantIndex.get(a.variant) ?? 0) - (variantIndex.get(b.variant) ?? 0) ||
      a.trial - b.trial ||
      a.seq - b.seq,
  );
}

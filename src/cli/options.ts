import { UsageError } from "./io.js";

/** A commander option parser for a whole number in [min, max]; anything else is a usage error naming the flag. */
export function wholeNumber(name: string, min: number, max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\d+$/.test(value) || !Number.isInteger(n) || n < min || n > max)
      throw new UsageError(
        `${name} must be a whole number from ${min} to ${max}, got ${JSON.stringify(value)}`,
      );
    return n;
  };
}

export function positiveInt(name: string, max: number) {
  return wholeNumber(name, 1, max);
}

/** A proportion below 1, above 0 or from 0 inclusive: `--power 0.8`, `--pass-rate 0.5`. */
export function proportion(name: string, from: "0 (inclusive)" | "0") {
  return (value: string): number => {
    const n = Number(value);
    const inRange = from === "0" ? n > 0 && n < 1 : n >= 0 && n < 1;
    if (!/^\d+(\.\d+)?$/.test(value) || !inRange)
      throw new UsageError(
        `${name} must be a number ${from === "0" ? "between 0 and 1, both excluded" : "from 0 up to, but not including, 1"}, got ${JSON.stringify(value)}`,
      );
    return n;
  };
}

/** A positive decimal number (`--max-cost-usd 5`, `--effect 0.2`), at most `max`. */
export function positiveNumber(name: string, what: string, max = Number.MAX_SAFE_INTEGER) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\d+(\.\d+)?$/.test(value) || !(n > 0) || n > max)
      throw new UsageError(
        `${name} must be ${what} greater than 0${max < Number.MAX_SAFE_INTEGER ? ` and at most ${max}` : ""}, got ${JSON.stringify(value)}`,
      );
    return n;
  };
}

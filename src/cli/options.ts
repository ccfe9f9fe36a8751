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

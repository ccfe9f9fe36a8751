// Comparisons of computed values against policy limits. Means and ratios of decimal inputs
// carry binary rounding (64.1 − 59.1 = 4.999999999999993), and a limit met exactly in
// decimal must count as met.

const RELATIVE_TOLERANCE = 1e-9;

function slack(limit: number): number {
  return Math.max(Math.abs(limit), 1) * RELATIVE_TOLERANCE;
}

/** value ≤ limit, up to floating-point rounding. */
export function atMost(value: number, limit: number): boolean {
  return value <= limit + slack(limit);
}

/** value ≥ limit, up to floating-point rounding. */
export function atLeast(value: number, limit: number): boolean {
  return value >= limit - slack(limit);
}

/** value and limit are equal up to floating-point rounding. */
export function nearlyEqual(value: number, limit: number): boolean {
  return atMost(value, limit) && atLeast(value, limit);
}

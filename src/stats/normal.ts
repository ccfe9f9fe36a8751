// The standard normal distribution, to the precision the intervals need (about 1e-15).

const SQRT_PI = Math.sqrt(Math.PI);

/** erfc(t) for t ≥ 0. */
function complementaryErrorFunction(t: number): number {
  if (t < 2.5) {
    // erf(t) = 2/√π · e^(−t²) · Σ (2t²)ⁿ t / (1·3·…·(2n+1)): every term is positive, so the sum
    // does not lose digits to cancellation the way the alternating Taylor series does.
    let term = t;
    let sum = t;
    for (let n = 1; n < 200 && term > sum * 1e-17; n++) {
      term *= (2 * t * t) / (2 * n + 1);
      sum += term;
    }
    return 1 - (2 / SQRT_PI) * Math.exp(-t * t) * sum;
  }
  // Laplace's continued fraction erfc(t) = e^(−t²)/√π · 1/(t + ½/(t + 1/(t + 3⁄2/(t + …)))),
  // evaluated from the tail; it converges quickly once t is past the series' comfort zone.
  let fraction = t;
  for (let n = 80; n >= 1; n--) fraction = t + n / 2 / fraction;
  return Math.exp(-t * t) / (SQRT_PI * fraction);
}

/** P(Z > z) for a standard normal Z. */
export function normalUpperTail(z: number): number {
  if (z < 0) return 1 - normalUpperTail(-z);
  return complementaryErrorFunction(z / Math.SQRT2) / 2;
}

const quantileCache = new Map<number, number>();

/** The z with P(Z ≤ z) = p, for 0 < p < 1. */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`normalQuantile needs 0 < p < 1, got ${p}`);
  const cached = quantileCache.get(p);
  if (cached !== undefined) return cached;
  if (p === 0.5) return 0;
  if (p < 0.5) return -normalQuantile(1 - p);
  const tail = 1 - p;
  // Bisection on the monotone upper tail: slow in theory, but it runs once per alpha and
  // needs no tabulated approximation constants.
  let low = 0;
  let high = 40;
  for (let i = 0; i < 200; i++) {
    const middle = (low + high) / 2;
    if (middle === low || middle === high) break;
    if (normalUpperTail(middle) > tail) low = middle;
    else high = middle;
  }
  const z = (low + high) / 2;
  quantileCache.set(p, z);
  return z;
}

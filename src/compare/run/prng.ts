// Seeded randomness for planning. Pure: the same seed always yields the same stream.

/**
 * mulberry32: a 32-bit state PRNG returning floats in [0, 1). Chosen because the seed
 * system's `harness-compare.v1` runner used it, so a v1 manifest's seed reproduces the
 * reference execution order exactly. Each call:
 *
 *   state = (state + 0x6D2B79F5) mod 2^32
 *   t = state
 *   t = imul(t ^ (t >>> 15), t | 1)
 *   t ^= t + imul(t ^ (t >>> 7), t | 61)
 *   return ((t ^ (t >>> 14)) >>> 0) / 2^32
 *
 * (`imul` is 32-bit integer multiplication; the seed is first reduced to uint32.)
 */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * In-place Fisher–Yates shuffle driven by `random`: for i from length-1 down to 1,
 * swap item i with item floor(random() * (i + 1)). Returns the same array.
 */
export function shuffleInPlace<T>(items: T[], random: () => number): T[] {
  for (let i = items.length - 1; i > 0; i -= 1) {
    const j = Math.floor(random() * (i + 1));
    const swap = items[i]!;
    items[i] = items[j]!;
    items[j] = swap;
  }
  return items;
}

// A bounded worker pool for trials and re-grades.

/**
 * Runs `worker` over `items` with at most `limit` in flight, in order of the list. When a worker
 * throws, no new item starts, the ones in flight finish (they are writing their records), and
 * then the first error is thrown.
 */
export async function runPool<T>(
  items: readonly T[],
  limit: number,
  worker: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failed = false;
  const lanes = Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, async () => {
    while (next < items.length && !failed) {
      const item = items[next++]!;
      try {
        await worker(item);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  });
  const settled = await Promise.allSettled(lanes);
  const rejected = settled.find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (rejected) throw rejected.reason;
}

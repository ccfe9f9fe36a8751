// The Redis a queue runs on: its address as the user gave it (checked, and shown without a
// password), and connections that give up after a short while instead of retrying forever, so
// a Redis that went away is a clear error on both sides rather than a hang.
import { Redis } from "ioredis";

import type { QueueAddress } from "./address.js";

export type { QueueAddress } from "./address.js";

/** What each connection last heard went wrong (ioredis itself then only says "Connection is closed."). */
const lastErrors = new WeakMap<Redis, string>();

/** How long a connection tries to get Redis back before it gives up (about 5 s). */
const RECONNECT_DELAYS_MS = [100, 200, 400, 800, 1000, 1000, 1500];

/**
 * A connection for BullMQ (which needs `maxRetriesPerRequest: null`) that gives up after a few
 * seconds without Redis and then calls `onLost` once with what happened.
 */
export function connect(
  address: QueueAddress,
  name: string,
  onLost: (message: string) => void,
): Redis {
  let lastError = "the connection closed";
  let lost = false;
  const redis = new Redis(address.url, {
    connectionName: name,
    maxRetriesPerRequest: null,
    enableOfflineQueue: true,
    retryStrategy: (times) => RECONNECT_DELAYS_MS[times - 1] ?? null,
  });
  redis.on("error", (error: Error) => {
    lastError = error.message;
    lastErrors.set(redis, error.message);
  });
  redis.on("end", () => {
    if (lost) return;
    lost = true;
    onLost(`lost the connection to Redis at ${address.shown} (${lastError})`);
  });
  return redis;
}

/** Waits until the connection answers, or says why it cannot. */
export async function reach(redis: Redis, address: QueueAddress): Promise<void> {
  try {
    await redis.ping();
  } catch (error) {
    const cause = lastErrors.get(redis) ?? (error as Error).message;
    throw new Error(`cannot reach Redis at ${address.shown}: ${cause}`);
  }
}

/** Checks that Redis answers at `address` before a run writes anything; says why not. */
export async function probeQueue(address: QueueAddress): Promise<string | undefined> {
  const redis = new Redis(address.url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  let heard: string | undefined;
  redis.on("error", (error: Error) => {
    heard ??= error.message;
  });
  try {
    await redis.connect();
    await redis.ping();
    return undefined;
  } catch (error) {
    return `cannot reach Redis at ${address.shown}: ${heard ?? (error as Error).message}`;
  } finally {
    redis.disconnect();
  }
}

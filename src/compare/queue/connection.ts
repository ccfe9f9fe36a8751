// The Redis a queue runs on: its address as the user gave it (checked, and shown without a
// password), and connections that give up after a short while instead of retrying forever, so
// a Redis that went away is a clear error on both sides rather than a hang.
import { Redis } from "ioredis";

export interface QueueAddress {
  /** The URL as given, for connecting. */
  url: string;
  /** The URL with any password masked, for messages. */
  shown: string;
}

export type ParsedAddress = { ok: true; address: QueueAddress } | { ok: false; message: string };

const ALLOWED =
  "redis://host:port[/db] or rediss://host:port[/db] (a password as redis://:password@host:port)";

/** Reads `--queue`'s value. */
export function parseQueueUrl(value: string): ParsedAddress {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { ok: false, message: `${JSON.stringify(value)} is not a URL; expected ${ALLOWED}` };
  }
  // Masked on the parsed URL: `url.password` is percent-encoded, so it is not always the text
  // the user typed.
  const masked = new URL(value);
  if (masked.password !== "") masked.password = "***";
  const shown = url.password === "" ? value : masked.href;
  if (url.protocol !== "redis:" && url.protocol !== "rediss:")
    return { ok: false, message: `${shown} is not a Redis URL; expected ${ALLOWED}` };
  if (url.hostname === "")
    return { ok: false, message: `${shown} names no host; expected ${ALLOWED}` };
  const db = url.pathname.replace(/^\//, "");
  if (db !== "" && !/^\d{1,2}$/.test(db))
    return {
      ok: false,
      message: `${shown}: the database must be a number (0-15), not ${JSON.stringify(db)}`,
    };
  if (url.search !== "" || url.hash !== "")
    return { ok: false, message: `${shown}: no query or fragment is read; expected ${ALLOWED}` };
  return { ok: true, address: { url: value, shown } };
}

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

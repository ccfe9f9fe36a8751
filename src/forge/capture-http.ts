// The HTTP edge of a capture: one fetch wrapper for both forges that waits out rate limits
// within a bound and turns a failed connection into a network error, and the capture's
// error type. The wait is injectable so tests never wait in real time.

export type CaptureErrorCode =
  | "auth"
  | "not-found"
  | "rate-limited"
  | "network"
  | "bad-response"
  | "http";

/** A capture that cannot finish; `message` says what happened and what to do. */
export class CaptureError extends Error {
  constructor(
    readonly code: CaptureErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "CaptureError";
  }
}

export interface RateLimitPolicy {
  /** Waits `ms` milliseconds (tests pass a recorder that returns at once). */
  sleep: (ms: number) => Promise<void>;
  /** The current time in milliseconds (for `x-ratelimit-reset`). */
  now: () => number;
  /** The most a whole capture waits for rate limits, in milliseconds. */
  maxWaitMs: number;
  /** The most times one request is retried after a rate limit. */
  maxRetries: number;
}

export const DEFAULT_MAX_RATE_LIMIT_WAIT_MS = 120_000;
const DEFAULT_WAIT_WITHOUT_HEADERS_MS = 60_000;

/**
 * How long a response asks the client to wait, or undefined when it is not a rate limit.
 * GitHub: 429, or 403 with `x-ratelimit-remaining: 0` (primary limit, wait until
 * `x-ratelimit-reset`) or with `retry-after` (secondary limit); a 429 without either
 * header means "wait at least a minute". Gitea and proxies send 429 with `retry-after`.
 */
function rateLimitWaitMs(status: number, headers: Headers, nowMs: number): number | undefined {
  if (status !== 429 && status !== 403) return undefined;
  const retryAfter = headers.get("retry-after");
  if (retryAfter !== null) {
    const seconds = Number(retryAfter);
    if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
    const date = Date.parse(retryAfter);
    if (Number.isFinite(date)) return Math.max(0, date - nowMs);
  }
  if (headers.get("x-ratelimit-remaining") === "0") {
    const reset = Number(headers.get("x-ratelimit-reset"));
    if (Number.isFinite(reset) && reset > 0) return Math.max(0, reset * 1000 - nowMs) + 1000;
    return DEFAULT_WAIT_WITHOUT_HEADERS_MS;
  }
  return status === 429 ? DEFAULT_WAIT_WITHOUT_HEADERS_MS : undefined;
}

/** Why a fetch threw, for a person: the innermost cause's code or message. */
function networkCause(error: unknown): string {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    const code = (current as NodeJS.ErrnoException).code;
    if (code) return code;
    if (!(current.cause instanceof Error)) return current.message;
    current = current.cause;
  }
  return String(current);
}

/**
 * `fetch` with rate-limit waits (bounded per request and per capture) and network errors
 * as CaptureError. Other responses, errors included, are returned as they are.
 */
export function createCaptureFetch(
  base: typeof fetch,
  policy: RateLimitPolicy,
  forgeName: string,
): typeof fetch {
  let waited = 0;
  return async (input, init) => {
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        response = await base(input, init);
      } catch (error) {
        const url = new URL(input instanceof Request ? input.url : String(input));
        throw new CaptureError(
          "network",
          `network failure: cannot reach ${url.origin} (${networkCause(error)}); check --url and that the ${forgeName} server is up`,
        );
      }
      const wait = rateLimitWaitMs(response.status, response.headers, policy.now());
      if (wait === undefined) return response;
      await response.body?.cancel();
      const seconds = Math.ceil(wait / 1000);
      if (attempt >= policy.maxRetries)
        throw new CaptureError(
          "rate-limited",
          `${forgeName} is still rate-limiting after ${attempt} retries of one request; try again later`,
        );
      if (waited + wait > policy.maxWaitMs)
        throw new CaptureError(
          "rate-limited",
          `${forgeName} rate limit: it asks to wait ${seconds} s, more than the ${Math.round(
            (policy.maxWaitMs - waited) / 1000,
          )} s this capture may still wait (--rate-limit-wait); try again later`,
        );
      waited += wait;
      await policy.sleep(wait);
    }
  };
}

/**
 * Retries for calls to the source server: 429 and 5xx answers and broken connections are tried
 * again after an exponential, jittered backoff, or after the server's Retry-After when it gives one.
 */

export interface RetryPolicy {
  /** Tries in all (the first one included). */
  attempts: number;
  baseMs: number;
  maxMs: number;
  /** A Retry-After longer than this is cut down to it (a misbehaving server must not stall the run). */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 6, baseMs: 500, maxMs: 30_000, maxRetryAfterMs: 120_000 };

/** The source answered with a status we did not want. */
export class HttpStatusError extends Error {
  constructor(
    readonly status: number,
    what: string,
    readonly retryAfterMs: number | null = null,
  ) {
    super(`${what}: HTTP ${status}`);
    this.name = 'HttpStatusError';
  }
}

/** A failure that another try cannot mend (bad data, a refused request, a conflict). */
export class PermanentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PermanentError';
  }
}

export function isRetryable(err: unknown): boolean {
  if (err instanceof PermanentError) return false;
  if (err instanceof HttpStatusError) return err.status === 408 || err.status === 429 || err.status >= 500;
  // Resets, timeouts, truncated bodies: the network's failures are worth another try.
  return true;
}

/** Retry-After as delay-seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, nowMs = Date.now()): number | null {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return null;
  if (/^\s*\d+\s*$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}

/** Full jitter: a random wait up to base·2^attempt, capped. */
export function backoffMs(attempt: number, policy: RetryPolicy): number {
  return Math.random() * Math.min(policy.maxMs, policy.baseMs * 2 ** attempt);
}

export async function withRetries<T>(policy: RetryPolicy, fn: () => Promise<T>, onRetry: (err: unknown) => void = () => undefined): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt + 1 >= policy.attempts || !isRetryable(err)) throw err;
      onRetry(err);
      const asked = err instanceof HttpStatusError ? err.retryAfterMs : null;
      const wait = asked !== null ? Math.min(asked, policy.maxRetryAfterMs) : backoffMs(attempt, policy);
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

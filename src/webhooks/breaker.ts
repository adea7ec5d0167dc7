/**
 * Circuit breakers for webhook targets, one per target origin (scheme, host, port), kept by each
 * node for itself. After `threshold` consecutive failures (no answer in time, a broken connection
 * or a 5xx) a target's breaker opens: its deliveries are not sent but rescheduled for when the
 * breaker half-opens. Then one delivery is let through as a probe: success closes the breaker,
 * failure opens it again for twice as long (up to `maxCoolDownMs`). A receiver that hangs thus
 * holds slots for a few timeouts, not for every queued notification.
 */

export type BreakerVerdict = { send: true } | { send: false; retryInMs: number; why: string };

const SEND: BreakerVerdict = { send: true };

interface TargetState {
  failures: number;
  lastError: string;
  /** Set while open: when the next probe may go. */
  openUntilMs: number | null;
  coolDownMs: number;
  probing: boolean;
}

export interface BreakerOptions {
  threshold: number;
  coolDownMs: number;
  maxCoolDownMs: number;
  /** How long a delivery waits while another one probes the target. */
  probeWaitMs: number;
  /** Most targets tracked; the oldest entries go first (a healthy target needs none). */
  maxTargets?: number;
}

export class TargetBreakers {
  private readonly targets = new Map<string, TargetState>();

  constructor(private readonly opts: BreakerOptions) {}

  /** Whether a delivery to `url` may be sent now. A `send: true` past the cool-down is the probe. */
  check(url: string, nowMs = Date.now()): BreakerVerdict {
    // No target failing (the usual case): no URL to parse on every delivery.
    if (this.targets.size === 0) return SEND;
    const key = originOf(url);
    const t = this.targets.get(key);
    if (!t || t.openUntilMs === null) return SEND;
    const streak = `${key} failed ${t.failures} times in a row (last: ${t.lastError})`;
    if (nowMs < t.openUntilMs) return { send: false, retryInMs: t.openUntilMs - nowMs, why: `circuit open: ${streak}` };
    if (t.probing) return { send: false, retryInMs: this.opts.probeWaitMs, why: `circuit half-open, another delivery is probing: ${streak}` };
    t.probing = true;
    return { send: true };
  }

  /** Records the outcome of a delivery that was sent. */
  record(url: string, ok: boolean, error: string, nowMs = Date.now()): void {
    if (ok && this.targets.size === 0) return;
    const key = originOf(url);
    const t = this.targets.get(key);
    if (ok) {
      this.targets.delete(key);
      return;
    }
    const state = t ?? { failures: 0, lastError: '', openUntilMs: null, coolDownMs: this.opts.coolDownMs, probing: false };
    state.failures++;
    state.lastError = error;
    if (state.probing) {
      state.probing = false;
      state.coolDownMs = Math.min(this.opts.maxCoolDownMs, state.coolDownMs * 2);
      state.openUntilMs = nowMs + state.coolDownMs;
    } else if (state.openUntilMs === null && state.failures >= this.opts.threshold) {
      state.openUntilMs = nowMs + state.coolDownMs;
    }
    this.targets.delete(key); // re-inserted last: the map's order is the eviction order
    this.targets.set(key, state);
    const max = this.opts.maxTargets ?? 10_000;
    for (const oldest of this.targets.keys()) {
      if (this.targets.size <= max) break;
      this.targets.delete(oldest);
    }
  }
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

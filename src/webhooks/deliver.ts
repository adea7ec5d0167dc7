/**
 * Delivery of one notification to one subscription, one attempt per job run: POST the frozen JSON
 * body through the outbound client (SSRF guard, timeout), sign it when the subscription has a
 * secret, record the attempt, and let the queue retry anything but a 2xx with growing delays
 * until webhookRetryForMs after the event. Refusals by policy (a blocked address, a malformed
 * URL) are recorded and given up at once: retrying cannot change the answer.
 *
 * Fairness: deliveries run in slots of their own (webhookConcurrency per node), at most
 * webhookConcurrencyPerProject of one project at once over all nodes (the claim skips a saturated
 * project), and a target that keeps failing is cut off by its circuit breaker (breaker.ts): its
 * deliveries are rescheduled, with the reason in the attempt log, instead of each waiting out
 * the timeout.
 */
import { performance } from 'node:perf_hooks';
import type { AppContext } from '../context.js';
import { isAppError } from '../core/errors.js';
import { nowUs } from '../core/time.js';
import type { WebhookDeliveryPayload } from '../jobs/kinds.js';
import { backoffMs } from '../jobs/queue.js';
import { JobGiveUpError, JobRetryLaterError, type JobHandler } from '../jobs/worker.js';
import { type Exchange, OutboundClient } from '../net/outbound.js';
import { TargetBreakers } from './breaker.js';
import { insertDeliveries, type NewDelivery } from './repo.js';
import type { SubscriptionReads } from './subscription-reads.js';
import { SIGNATURE_HEADER, signatureHeader } from './signature.js';

const EXCERPT_BYTES = 1024;
/** Outbound errors that are the URL's or the policy's verdict, not a passing failure. */
const PERMANENT_CODES = new Set([
  'URLParsingFailedError',
  'URLSchemeRequiredError',
  'URLSchemeInvalidError',
  'URLHostRequiredError',
  'URLHostMalformedError',
  'URLHostPrivateIPForbiddenError',
]);

interface Attempt {
  status: number | null;
  excerpt: string | null;
  error: string | null;
  permanent: boolean;
}

export function deliveryHandler(ctx: AppContext, subscriptions: SubscriptionReads): JobHandler<'webhook.deliver'> {
  const cfg = ctx.config;
  const client = new OutboundClient({
    allowCidrs: cfg.outboundAllow,
    timeoutMs: cfg.webhookTimeoutMs,
    maxBytes: 64 * 1024,
    maxRedirects: 0,
    userAgent: 'Stowage-Webhooks/0.7',
  });
  const retryInMs = (attempt: number) => backoffMs(attempt, cfg.webhookRetryBaseMs, cfg.webhookRetryMaxMs);
  const failures = ctx.metrics.counter('stowage_webhook_delivery_failures_total', 'Webhook delivery attempts that got no 2xx (timeouts, connection errors, refusals, other statuses)');
  const breakers = new TargetBreakers({
    threshold: cfg.webhookBreakerFailures,
    coolDownMs: cfg.webhookBreakerCooldownMs,
    maxCoolDownMs: Math.max(cfg.webhookBreakerCooldownMs, cfg.webhookRetryMaxMs),
    // The probe's answer is known within one timeout.
    probeWaitMs: cfg.webhookTimeoutMs,
  });

  return {
    // The heartbeat renews it while a slow receiver holds the request; after a crash the
    // delivery is picked up again this long after the last renewal.
    leaseMs: cfg.webhookTimeoutMs + 2000,
    retryInMs,
    // Slots of their own: a receiver that lets every request time out must not hold up expiry,
    // byte reclaiming and the other jobs.
    concurrency: cfg.webhookConcurrency,
    perKeyLimit: cfg.webhookConcurrencyPerProject,
    // PostgreSQL: the subscription comes with the claim (one round trip less per claim).
    claimRead: { table: 'webhooks', idField: 'subscriptionId' satisfies keyof WebhookDeliveryPayload },
    async run(d, job, outcome): Promise<void> {
      // The attempt record is committed with the job's outcome (one commit per delivery, shared
      // by the deliveries finishing together, and one INSERT for the records of that commit).
      const record = (attempt: NewDelivery) => outcome.alongsideMerged(insertDeliveries, attempt);
      const sub = job.readRow !== undefined ? subscriptions.claimed(d.projectId, job.readRow) : await subscriptions.get(d.projectId, d.subscriptionId);
      // Unsubscribed or deactivated since the event: the user no longer wants it.
      if (!sub || !sub.isActive) return;
      const giveUpAtUs = d.eventUs + cfg.webhookRetryForMs * 1000;
      const verdict = breakers.check(sub.targetUrl);
      if (!verdict.send) {
        const nextUs = nowUs() + verdict.retryInMs * 1000;
        const why = `${verdict.why}; not sent, next attempt after ${new Date(nextUs / 1000).toISOString()}`;
        record({ webhookId: sub.id, projectId: d.projectId, event: d.event, eventId: d.eventId ?? job.id, attempt: job.attempt, targetUrl: sub.targetUrl, startedUs: nowUs(), durationMs: 0, status: null, success: false, error: why, responseExcerpt: null });
        if (nextUs > giveUpAtUs) throw new JobGiveUpError(`gave up after ${job.attempt} attempts: ${verdict.why}`);
        throw new JobRetryLaterError(verdict.why, verdict.retryInMs);
      }
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (sub.signingSecret) headers[SIGNATURE_HEADER] = signatureHeader(sub.signingSecret, d.body);
      const startedUs = nowUs();
      const t0 = performance.now();
      const result = await attempt(client, sub.targetUrl, headers, d.body);
      const success = result.status !== null && result.status >= 200 && result.status < 300;
      if (!success) failures.inc();
      // The target's health: it answered (a 4xx is an answer). A refusal by policy says nothing about it.
      if (!result.permanent) breakers.record(sub.targetUrl, result.status !== null && result.status < 500, result.error ?? `HTTP ${result.status}`);
      record({
        webhookId: sub.id,
        projectId: d.projectId,
        event: d.event,
        eventId: d.eventId ?? job.id,
        attempt: job.attempt,
        targetUrl: sub.targetUrl,
        startedUs,
        durationMs: Math.round(performance.now() - t0),
        status: result.status,
        success,
        error: result.error,
        responseExcerpt: result.excerpt,
      });
      if (success) return;
      const reason = result.error ?? `HTTP ${result.status}`;
      if (result.permanent) throw new JobGiveUpError(`refused: ${reason}`);
      // Give up when even the shortest next delay lands past the retry window.
      const soonestNextUs = nowUs() + (Math.min(cfg.webhookRetryMaxMs, cfg.webhookRetryBaseMs * 2 ** (job.attempt - 1)) / 2) * 1000;
      if (soonestNextUs > giveUpAtUs) throw new JobGiveUpError(`gave up after ${job.attempt} attempts: ${reason}`);
      throw new Error(reason);
    },
  };
}

async function attempt(client: OutboundClient, url: string, headers: Record<string, string>, body: string): Promise<Attempt> {
  let res: Exchange;
  try {
    res = await client.exchange(url, { method: 'POST', headers, body, excerptBytes: EXCERPT_BYTES });
  } catch (err) {
    if (isAppError(err)) return { status: null, excerpt: null, error: `${err.code}: ${err.message}`, permanent: PERMANENT_CODES.has(err.code) };
    return { status: null, excerpt: null, error: err instanceof Error ? err.message : String(err), permanent: false };
  }
  // The status already arrived; a body that stalls or breaks only loses the excerpt.
  const error = res.bodyError ? `${res.bodyError.code}: ${res.bodyError.message} (while reading the response)` : null;
  return { status: res.status, excerpt: res.excerpt, error, permanent: false };
}

/**
 * Webhook fairness over real HTTP: a project whose receiver hangs holds at most its own share of
 * delivery slots, so another project's notification still arrives at once; the hanging target's
 * circuit breaker opens after consecutive timeouts (deliveries held back, not lost, the attempt
 * log saying why) and closes again when the target answers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useServer } from '../helpers/use-server.js';
import { restClient, uploadBase } from '../helpers/rest.js';
import { eventually, sleep, startReceiver, type Receiver } from './receiver.js';

const form = (fields: Record<string, string>) => ({ body: new URLSearchParams(fields).toString(), contentType: 'application/x-www-form-urlencoded' });
// Below the 50 events sent, so the limit shows; the node's lane keeps the defaults' ratio (4 projects wide).
const PER_PROJECT = 16;
const PER_NODE = 64;

interface DeliveryRec {
  status: number | null;
  success: boolean;
  error: string | null;
}

const srv = useServer({
  env: {
    STOWAGE_OUTBOUND_ALLOW: '127.0.0.0/8',
    STOWAGE_WEBHOOK_TIMEOUT_MS: '2000',
    STOWAGE_WEBHOOK_RETRY_BASE_MS: '300',
    STOWAGE_WEBHOOK_RETRY_MAX_MS: '1000',
    STOWAGE_WEBHOOK_RETRY_FOR_MS: '300000',
    STOWAGE_WEBHOOK_BREAKER_FAILURES: '3',
    STOWAGE_WEBHOOK_BREAKER_COOLDOWN_MS: '1500',
    STOWAGE_WEBHOOK_CONCURRENCY_PER_PROJECT: String(PER_PROJECT),
    STOWAGE_WEBHOOK_CONCURRENCY: String(PER_NODE),
  },
});
let hanging: Receiver;
let healthy: Receiver;
let hang = true;
const projects: Array<{ pub: string; call: ReturnType<typeof restClient>; hook: number }> = [];

beforeAll(async () => {
  hanging = await startReceiver(() => (hang ? 'hang' : { status: 200, body: 'back' }));
  healthy = await startReceiver();
  for (const receiver of [hanging, healthy]) {
    const keys = await srv.server.createProject();
    const call = restClient(srv.rest, keys);
    const r = await call('POST', '/webhooks/', form({ target_url: receiver.url, event: 'file.uploaded' }));
    expect(r.status).toBe(201);
    projects.push({ pub: keys.public_key, call, hook: r.json.id });
  }
});
afterAll(async () => {
  await Promise.all([hanging?.close(), healthy?.close()]);
});

/** Every attempt record of the project's subscription, newest first (all pages). */
async function records(p: (typeof projects)[number]): Promise<DeliveryRec[]> {
  const out: DeliveryRec[] = [];
  for (let page: string | null = `/webhooks/${p.hook}/deliveries/?limit=100`; page; ) {
    const r = await p.call('GET', page);
    expect(r.status).toBe(200);
    out.push(...(r.json.results as DeliveryRec[]));
    page = r.json.next ? new URL(r.json.next as string).pathname + new URL(r.json.next as string).search : null;
  }
  return out;
}

describe('one project with a hanging receiver and 50 events', () => {
  const uuidsA = new Set<string>();

  it("holds at most its project's share of slots; another project's events arrive within 2 s", async () => {
    const [a] = projects;
    const files = Array.from({ length: 50 }, (_, i) => ({ field: `f${i}`, name: `a${i}.txt`, data: `a${i}` }));
    const up = await uploadBase(srv.upload, a!.pub, files, { UPLOADCARE_STORE: '0' });
    expect(up.status).toBe(200);
    for (const uuid of Object.values(up.json as Record<string, string>)) uuidsA.add(uuid);
    await hanging.waitFor(PER_PROJECT, 5000);

    for (let i = 0; i < 3; i++) {
      const up = await uploadBase(srv.upload, projects[1]!.pub, [{ name: `b${i}.txt`, data: `b${i}` }], { UPLOADCARE_STORE: '0' });
      const answered = Date.now();
      const [hit] = await healthy.waitFor(1, 2000, (r) => r.json?.data?.uuid === up.json.file);
      expect(hit).toBeDefined();
      expect(Date.now() - answered).toBeLessThan(2000);
    }
    // The rest of A waited for A's own slots.
    expect(hanging.maxInFlight).toBe(PER_PROJECT);
  });

  it('the breaker opens after consecutive timeouts: deliveries are held back with the reason logged, not sent', async () => {
    const [a] = projects;
    const held = await eventually(
      async () => {
        const found = (await records(a!)).filter((r) => r.error?.startsWith('circuit open'));
        return found.length > 0 && found;
      },
      15_000,
      'a delivery held back by the breaker',
    );
    expect(held[0]).toMatchObject({ status: null, success: false });
    expect(held[0]!.error).toMatch(/failed \d+ times in a row .*DownloadFileTimeLimitExceededError.*next attempt after/);
    const timeouts = (await records(a!)).filter((r) => r.error?.includes('DownloadFileTimeLimitExceededError'));
    expect(timeouts.length).toBeGreaterThanOrEqual(3);
    // Held back instead of each waiting out its own timeout: while open, only the probes go out
    // (one per cool-down of 1.5 s, each hanging for the 2 s timeout).
    const before = hanging.received.length;
    await sleep(3000);
    expect(hanging.received.length - before).toBeLessThanOrEqual(2);
    expect(hanging.received.length).toBeLessThan(25);
  });

  it('closes again once the target answers; every one of the 50 events is delivered', async () => {
    const [a] = projects;
    hang = false;
    const delivered = await eventually(
      async () => {
        const got = new Set(hanging.received.filter((r) => r.json?.hook?.event === 'file.uploaded').map((r) => r.json.data.uuid as string));
        return [...uuidsA].every((u) => got.has(u)) && got;
      },
      40_000,
      'all 50 events of the recovered target',
    );
    expect(delivered.size).toBe(50);
    // The receiver answers before the server writes the record.
    const recs = await eventually(async () => {
      const all = await records(a!);
      return all.filter((r) => r.success).length >= 50 && all;
    }, 10_000, '50 successful attempt records');
    expect(recs.filter((r) => r.success).length).toBe(50);
    expect(recs.some((r) => r.error?.startsWith('circuit half-open') || r.error?.startsWith('circuit open'))).toBe(true);
  });
});

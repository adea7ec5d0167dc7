/**
 * Durability: a server killed with SIGKILL after the change committed but before the receiver
 * acknowledged delivers the event once restarted on the same data dir / schema.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { restClient, uploadBase } from '../helpers/rest.js';
import { eventually, startReceiver, validSignature, type Receiver } from './receiver.js';

const ENV = {
  STOWAGE_OUTBOUND_ALLOW: '127.0.0.0/8',
  STOWAGE_WEBHOOK_TIMEOUT_MS: '3000',
  STOWAGE_WEBHOOK_RETRY_BASE_MS: '200',
  STOWAGE_WEBHOOK_RETRY_MAX_MS: '500',
};
const form = (fields: Record<string, string>) => ({ body: new URLSearchParams(fields).toString(), contentType: 'application/x-www-form-urlencoded' });

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0)) await f().catch(() => undefined);
});

async function setup(receiverUrl: string) {
  // useServer() does not fit: the server is killed (SIGKILL) and restarted on its data dir.
  const server = await startServer({ env: ENV });
  cleanup.push(() => server.stop());
  const keys = await server.createProject();
  const call = restClient(server.rest, keys);
  const sub = await call('POST', '/webhooks/', form({ target_url: receiverUrl, event: 'file.uploaded', signing_secret: 'crash' }));
  expect(sub.status).toBe(201);
  return { server, keys, hookId: sub.json.id as number };
}

async function restart(server: TestServer): Promise<TestServer> {
  const again = await startServer({ dataDir: server.dataDir, ...(server.schema ? { schema: server.schema } : {}), env: ENV });
  cleanup.push(() => again.stop());
  return again;
}

describe('SIGKILL between commit and delivery', () => {
  it('a delivery in flight (receiver slow) is delivered after restart', async () => {
    const receiver: Receiver = await startReceiver((n) => (n === 0 ? 'hang' : { status: 200 }));
    cleanup.push(() => receiver.close());
    const { server, keys, hookId } = await setup(receiver.url);
    const up = await uploadBase(server.upload, keys.public_key, [{ name: 'k.txt', data: 'k' }], { UPLOADCARE_STORE: '0' });
    expect(up.status).toBe(200);
    const [first] = await receiver.waitFor(1);
    await server.kill(); // the receiver is still holding the request: nothing was acknowledged
    const again = await restart(server);
    const hits = await receiver.waitFor(2, 30_000);
    expect(hits[1]!.body).toBe(first!.body);
    expect(hits[1]!.json.data.uuid).toBe(up.json.file);
    expect(validSignature('crash', hits[1]!.body, hits[1]!.headers['x-uc-signature'])).toBe(true);
    const call = restClient(again.rest, keys);
    const recs = await eventually(async () => {
      const r = await call('GET', `/webhooks/${hookId}/deliveries/`);
      return r.json.results.length > 0 && r.json.results;
    }, 10_000, 'the delivery record');
    // The killed attempt left no record; the claim still counted, so this is attempt 2.
    expect(recs).toHaveLength(1);
    expect(recs[0]).toMatchObject({ attempt: 2, status: 200, success: true });
  });

  it('an event committed while the receiver is down is delivered after restart', async () => {
    // Reserve a port, then leave it closed: the receiver is "down".
    const probe = await startReceiver();
    const port = probe.port;
    await probe.close();
    const { server, keys } = await setup(`http://127.0.0.1:${port}/hook`);
    const up = await uploadBase(server.upload, keys.public_key, [{ name: 'd.txt', data: 'd' }], { UPLOADCARE_STORE: '0' });
    expect(up.status).toBe(200);
    await server.kill();
    const receiver = await startReceiver(() => ({ status: 200 }), port);
    cleanup.push(() => receiver.close());
    await restart(server);
    const [hit] = await receiver.waitFor(1, 30_000);
    expect(hit!.json.data.uuid).toBe(up.json.file);
    expect(hit!.json.hook.event).toBe('file.uploaded');
  });
});

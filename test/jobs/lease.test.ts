/**
 * A from_url download longer than its job's lease keeps the lease (the worker's fenced heartbeat
 * renews it; the fetch job has no renewal of its own): the job is not claimed a second time, so
 * the origin sees one request and the file is made once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { restClient } from '../helpers/rest.js';
import { useServer } from '../helpers/use-server.js';
import { bytes, get, postQuery, until } from '../uploads/helpers.js';
import { startOrigin, type Origin } from '../uploads/origin.js';

let origin: Origin;
const payload = bytes(300_000, 3);
const LEASE_MS = 1000;

beforeAll(async () => {
  origin = await startOrigin(payload);
  // Short lease and quick polls: a lease that lapsed would be claimed again within 100 ms.
});
const srv = useServer({ env: { STOWAGE_OUTBOUND_ALLOW: '127.0.0.1/32', STOWAGE_FROM_URL_LEASE_MS: String(LEASE_MS), STOWAGE_JOB_POLL_MS: '100' } });
afterAll(async () => {
  origin?.close();
});

const status = (token: string) => get(`${srv.upload}/from_url/status/?token=${encodeURIComponent(token)}&jsonerrors=1`);

describe('a long from_url fetch', () => {
  it('keeps its lease for four lease lengths: one request to the origin, one file', async () => {
    const r = await postQuery(`${srv.upload}/from_url/`, { pub_key: srv.keys.public_key, source_url: `${origin.url}/gated` });
    expect(r.json.type).toBe('token');
    const token = r.json.token as string;
    await until(async () => ((await status(token)).json.status === 'progress' ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 4 * LEASE_MS));
    expect(origin.hits.get('/gated')).toBe(1);
    origin.release();
    const done = await until(async () => {
      const s = await status(token);
      return s.json.status === 'success' || s.json.status === 'error' ? s : undefined;
    });
    expect(done.json).toMatchObject({ status: 'success', size: payload.length });
    expect(origin.hits.get('/gated')).toBe(1);
    const list = await restClient(srv.rest, srv.keys)('GET', '/files/?limit=10');
    expect(list.json.results).toHaveLength(1);
  });
});

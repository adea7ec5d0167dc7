/**
 * The SSRF guard as /from_url/ shows it, on a server with no allowlist: every refused address class,
 * names that resolve to loopback, and the loopback origin of the other suites, all answered
 * synchronously with the wire error.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useServer } from '../helpers/use-server.js';
import { postQuery } from './helpers.js';
import { startOrigin, type Origin } from './origin.js';

let origin: Origin;

beforeAll(async () => {
  origin = await startOrigin(Buffer.from('secret internal data'));
});
const srv = useServer({ env: { STOWAGE_OUTBOUND_ALLOW: '' } });
afterAll(async () => {
  origin?.close();
});

const REFUSED: Array<[string, string]> = [
  ['loopback', 'http://127.0.0.1/'],
  ['loopback (other)', 'http://127.9.8.7:8080/x'],
  ['loopback (decimal form)', 'http://2130706433/'],
  ['this network', 'http://0.0.0.0/'],
  ['private 10/8', 'http://10.0.0.1/'],
  ['private 172.16/12', 'http://172.16.5.4/'],
  ['private 192.168/16', 'http://192.168.1.1/'],
  ['carrier-grade NAT', 'http://100.64.0.1/'],
  ['link-local', 'http://169.254.10.10/'],
  ['cloud metadata', 'http://169.254.169.254/latest/meta-data/'],
  ['multicast', 'http://224.0.0.1/'],
  ['IPv6 loopback', 'http://[::1]/'],
  ['IPv6 unique-local', 'http://[fd12:3456::1]/'],
  ['IPv6 link-local', 'http://[fe80::1]/'],
  ['IPv4-mapped loopback', 'http://[::ffff:127.0.0.1]/'],
  ['NAT64 of a private address', 'http://[64:ff9b::a00:1]/'],
  ['a name resolving to loopback', 'http://localhost/'],
];

describe('SSRF guard on /from_url/ (no allowlist)', () => {
  it.each(REFUSED)('refuses %s', async (_name, url) => {
    const r = await postQuery(`${srv.upload}/from_url/`, { pub_key: srv.keys.public_key, source_url: url });
    expect([r.status, r.text]).toEqual([400, 'Only public IPs are allowed.']);
    const j = await postQuery(`${srv.upload}/from_url/`, { pub_key: srv.keys.public_key, source_url: url, jsonerrors: '1' });
    expect(j.json).toEqual({ error: { status_code: 400, content: 'Only public IPs are allowed.', error_code: 'URLHostPrivateIPForbiddenError' } });
  });

  it('never contacts the loopback origin that other suites allowlist', async () => {
    const r = await postQuery(`${srv.upload}/from_url/`, { pub_key: srv.keys.public_key, source_url: `${origin.url}/plain/data.bin` });
    expect(r.status).toBe(400);
    expect(origin.hits.size).toBe(0);
  });
});

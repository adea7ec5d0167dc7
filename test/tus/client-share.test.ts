/**
 * What one client address may reserve with tus creations (docs/tus.md, "Limits"): anonymous
 * POST /tus/ with a project's public key and a large Upload-Length cannot use up the project's
 * budget. One address over its share gets a 413 of its own; other addresses still upload. The
 * addresses are real: requests leave from 127.0.0.2 and 127.0.0.3 (the whole of 127/8 is loopback
 * on Linux), and the server trusts 127.0.0.1 as a proxy, so its X-Forwarded-For names the client.
 */
import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { useServer } from '../helpers/use-server.js';
import { metadataHeader, TUS } from './helpers.js';

const SHARE = 3000;
const srv = useServer({ env: { STOWAGE_TUS_PROJECT_MAX_BYTES: '10000', STOWAGE_TUS_CLIENT_MAX_BYTES: String(SHARE), STOWAGE_TRUSTED_PROXIES: '127.0.0.1' } });

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/** One request to the Upload server leaving from `from` (a local address). */
function send(from: string, method: string, url: string, headers: Record<string, string>, body?: Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, localAddress: from, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const create = (from: string, length: number, extra: Record<string, string> = {}) =>
  send(from, 'POST', `${srv.upload}/tus/`, { ...TUS, 'upload-length': String(length), 'upload-metadata': metadataHeader({ UPLOADCARE_PUB_KEY: srv.keys.public_key, filename: 'x.bin' }), ...extra });

const via = (client: string) => ({ 'x-forwarded-for': client });

describe('tus: what one client address may reserve', () => {
  it('refuses one address past its share with a 413 of its own; another address still uploads', async () => {
    // Ten creations of a thousand bytes from one address: its share holds three.
    const attacker: number[] = [];
    for (let i = 0; i < 10; i++) attacker.push((await create('127.0.0.2', 1000)).status);
    expect(attacker).toEqual([201, 201, 201, 413, 413, 413, 413, 413, 413, 413]);
    const refused = await create('127.0.0.2', 1000);
    expect(refused.status).toBe(413);
    expect(refused.text).toMatch(/total size one client may reserve/);
    // X-Forwarded-For from a peer that is not a trusted proxy names nobody.
    expect((await create('127.0.0.2', 1000, via('198.51.100.9'))).status).toBe(413);

    // Another address: its upload goes through, to the end.
    const data = Buffer.from('a file from another address');
    const made = await create('127.0.0.3', data.length);
    expect(made.status, made.text).toBe(201);
    const done = await send('127.0.0.3', 'PATCH', made.headers.location as string, { ...TUS, 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' }, data);
    expect(done.status, done.text).toBe(204);
    const uuid = done.headers['stowage-file-uuid'] as string;
    expect(Buffer.from(await (await fetch(`${srv.cdn}/${uuid}/`)).arrayBuffer()).equals(data)).toBe(true);
  });

  it('frees the share when the address terminates its uploads', async () => {
    const first = await create('127.0.0.4', SHARE);
    expect(first.status).toBe(201);
    expect((await create('127.0.0.4', 1)).status).toBe(413);
    expect((await send('127.0.0.4', 'DELETE', first.headers.location as string, TUS)).status).toBe(204);
    expect((await create('127.0.0.4', 1)).status).toBe(201);
  });

  it('counts the client a trusted proxy names, an IPv6 client by its /64', async () => {
    expect((await create('127.0.0.1', SHARE, via('203.0.113.7'))).status).toBe(201);
    expect((await create('127.0.0.1', 1, via('203.0.113.7'))).status).toBe(413);
    expect((await create('127.0.0.1', 1, via('203.0.113.8'))).status).toBe(201);
    expect((await create('127.0.0.1', SHARE, via('2001:db8:1:2::1'))).status).toBe(201);
    expect((await create('127.0.0.1', 1, via('2001:db8:1:2:ffff::9'))).status).toBe(413);
    expect((await create('127.0.0.1', 1, via('2001:db8:1:3::1'))).status).toBe(201);
  });

  it('keeps the project budget over all addresses', async () => {
    // Open now (the tests above): 3000 + 1 + 3000 + 1 + 3000 + 1 = 9003 of the project's 10000.
    const over = await create('127.0.0.10', 1000);
    expect(over.status).toBe(413);
    expect(over.text).toMatch(/project's unfinished tus uploads/);
    expect((await create('127.0.0.11', 997)).status).toBe(201);
  });
});

/**
 * The S3 surface's signature checks, with requests signed by the AWS SDK's own signer
 * (@smithy/signature-v4): the payload hash is checked against the stored bytes, aws-chunked bodies
 * with signed chunks are accepted only with every chunk signature right, stale header signatures
 * and expired presigned URLs are refused, and a wrong Content-MD5 stores nothing. A project past
 * its request budget is told S3's SlowDown. (UploadPart's checks: part-checks.test.ts.)
 */
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useServer } from '../helpers/use-server.js';
import { request } from '../helpers/http.js';
import { headerSigner, S3_SERVER, sha256Hex, signedRequest } from './helpers.js';

// A project's budget of 40 requests at once, then one every 2 s: the throttling test, last, spends it.
const srv = useServer({ env: { ...S3_SERVER.env, STOWAGE_RATE_UPLOAD_PER_SEC: '0.5', STOWAGE_RATE_UPLOAD_BURST: '40' } });

const signer = () => headerSigner(srv.keys);

/** A request to `key` signed in its headers; `headers` must hold the x-amz-content-sha256 to sign. */
const signed = (method: string, key: string, headers: Record<string, string>, signingDate = new Date()) => signedRequest(srv, method, key, headers, { signingDate });

const get = async (key: string) => {
  const s = await signed('GET', key, { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' });
  return request(s.url, { headers: s.headers });
};

/** An aws-chunked body whose chunks are signed from `seed` (the request's signature), as the SDKs stream. */
function chunkedBody(chunks: Buffer[], seed: string, amzDate: string, scope: string, key: Buffer, corrupt = false): Buffer {
  const empty = sha256Hex('');
  let previous = seed;
  const parts: Buffer[] = [];
  for (const data of [...chunks, Buffer.alloc(0)]) {
    const toSign = `AWS4-HMAC-SHA256-PAYLOAD\n${amzDate}\n${scope}\n${previous}\n${empty}\n${sha256Hex(data)}`;
    let sig = crypto.createHmac('sha256', key).update(toSign).digest('hex');
    if (corrupt && data.length > 0) sig = sig.replace(/^./, (c) => (c === '0' ? '1' : '0'));
    parts.push(Buffer.from(`${data.length.toString(16)};chunk-signature=${sig}\r\n`), data, Buffer.from('\r\n'));
    previous = sig;
  }
  return Buffer.concat(parts);
}

function signingKey(secret: string, date: string): Buffer {
  const h = (k: string | Buffer, t: string) => crypto.createHmac('sha256', k).update(t).digest();
  return h(h(h(h(`AWS4${secret}`, date), 'us-east-1'), 's3'), 'aws4_request');
}

async function putChunked(key: string, corrupt: boolean) {
  const chunks = [crypto.randomBytes(70_000), crypto.randomBytes(1234)];
  const total = chunks.reduce((n, c) => n + c.length, 0);
  const s = await signed('PUT', key, { 'x-amz-content-sha256': 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD', 'content-encoding': 'aws-chunked', 'x-amz-decoded-content-length': String(total) });
  const amzDate = s.headers['x-amz-date'] as string;
  const seed = /Signature=([0-9a-f]{64})/.exec(s.headers['authorization'] as string)?.[1] as string;
  const scope = `${amzDate.slice(0, 8)}/us-east-1/s3/aws4_request`;
  const body = chunkedBody(chunks, seed, amzDate, scope, signingKey(srv.keys.secret_key, amzDate.slice(0, 8)), corrupt);
  const r = await request(s.url, { method: 'PUT', headers: { ...s.headers, 'content-length': String(body.length) }, body });
  return { r, data: Buffer.concat(chunks) };
}

describe('S3 signatures and body checks', () => {
  it('a body that is not the one the signed payload hash names is refused and not stored', async () => {
    const s = await signed('PUT', 'hash/mismatch.txt', { 'x-amz-content-sha256': sha256Hex('the signed body') });
    const r = await request(s.url, { method: 'PUT', headers: s.headers, body: 'another body' });
    expect([r.status, /<Code>XAmzContentSHA256Mismatch<\/Code>/.test(r.text)]).toEqual([400, true]);
    expect((await get('hash/mismatch.txt')).status).toBe(404);
    const ok = await signed('PUT', 'hash/match.txt', { 'x-amz-content-sha256': sha256Hex('the signed body') });
    expect((await request(ok.url, { method: 'PUT', headers: ok.headers, body: 'the signed body' })).status).toBe(200);
    expect((await get('hash/match.txt')).text).toBe('the signed body');
  });

  it('aws-chunked with signed chunks: stored when every chunk signature holds, refused when one does not', async () => {
    const good = await putChunked('chunked/good.bin', false);
    expect(good.r.status, good.r.text).toBe(200);
    expect((await get('chunked/good.bin')).body.equals(good.data)).toBe(true);
    const bad = await putChunked('chunked/bad.bin', true);
    expect([bad.r.status, /SignatureDoesNotMatch/.test(bad.r.text)]).toEqual([403, true]);
    expect((await get('chunked/bad.bin')).status).toBe(404);
  });

  it('a header signature more than 15 minutes old is RequestTimeTooSkewed', async () => {
    const s = await signed('GET', 'anything', { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' }, new Date(Date.now() - 20 * 60_000));
    const r = await request(s.url, { headers: s.headers });
    expect([r.status, /RequestTimeTooSkewed/.test(r.text)]).toEqual([403, true]);
  });

  it('an expired presigned URL is refused', async () => {
    const url = new URL(`${srv.s3}/${srv.keys.public_key}/hash/match.txt`);
    const presigned = await signer().presign(
      { method: 'GET', protocol: 'http:', hostname: url.hostname, port: Number(url.port), path: url.pathname, query: {}, headers: { host: url.host } },
      { expiresIn: 60, signingDate: new Date(Date.now() - 120_000) },
    );
    const query = new URLSearchParams(presigned.query as Record<string, string>).toString();
    const r = await request(`${url}?${query}`);
    expect([r.status, /expired/.test(r.text)]).toEqual([403, true]);
  });

  it('a wrong Content-MD5 is BadDigest and stores nothing', async () => {
    const s = await signed('PUT', 'md5/wrong.txt', { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD', 'content-md5': crypto.createHash('md5').update('other').digest('base64') });
    const r = await request(s.url, { method: 'PUT', headers: s.headers, body: 'content' });
    expect([r.status, /BadDigest/.test(r.text)]).toEqual([400, true]);
    expect((await get('md5/wrong.txt')).status).toBe(404);
  });

  // Last: it spends the project's budget.
  it('past the project\'s budget, requests are SlowDown (503) with Retry-After', async () => {
    const answers = await Promise.all(Array.from({ length: 45 }, () => get('nothing-here')));
    const slow = answers.filter((r) => r.status === 503);
    expect(slow.length).toBeGreaterThan(0);
    expect([/<Code>SlowDown<\/Code>/.test(slow[0]!.text), Number(slow[0]!.headers.get('retry-after')) >= 1]).toEqual([true, true]);
    expect(answers.filter((r) => r.status === 404).length).toBeGreaterThan(0);
  });
});

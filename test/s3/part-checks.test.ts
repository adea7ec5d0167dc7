/**
 * UploadPart's body checks, with requests signed by the AWS SDK's own signer: a part whose bytes
 * are not the ones its signed payload hash (x-amz-content-sha256), Content-MD5 or
 * x-amz-checksum-crc32 names is refused (XAmzContentSHA256Mismatch, BadDigest) before it is
 * recorded, whether it is hashed in the digest threads (a large part) or in one request (a small
 * last one), on disk and on object storage alike; the right bytes are then accepted and complete.
 * On object storage a wrong CRC32 fails the body only at its end, after the bucket took every byte:
 * the part is still refused, and the node goes on serving.
 */
import crypto from 'node:crypto';
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { useServer } from '../helpers/use-server.js';
import { request } from '../helpers/http.js';
import { S3_SERVER, sha256Hex, signedRequest } from './helpers.js';

const srv = useServer({ env: S3_SERVER.env });

describe('S3 UploadPart body checks', () => {
  it('a part whose payload hash, Content-MD5 or CRC32 is not its bytes is refused and not recorded', async () => {
    const key = 'parts/checked.bin';
    const created = await signedRequest(srv, 'POST', key, { 'x-amz-content-sha256': sha256Hex('') }, { query: { uploads: '' } });
    const uploadId = /<UploadId>([^<]+)<\/UploadId>/.exec((await request(created.url, { method: 'POST', headers: created.headers })).text)?.[1] as string;
    const part = async (partNumber: number, body: Buffer, headers: Record<string, string> = {}) => {
      const s = await signedRequest(srv, 'PUT', key, { 'x-amz-content-sha256': sha256Hex(body), ...headers }, { query: { partNumber: String(partNumber), uploadId } });
      return request(s.url, { method: 'PUT', headers: s.headers, body });
    };
    const md5 = (b: Buffer) => crypto.createHash('md5').update(b);
    const crc32 = (b: Buffer) => {
      const out = Buffer.alloc(4);
      out.writeUInt32BE(zlib.crc32(b));
      return out.toString('base64');
    };
    // Large parts are hashed in the digest threads, a small last one in one request: both are checked.
    const first = crypto.randomBytes(6 * 1024 * 1024);
    const second = crypto.randomBytes(6 * 1024 * 1024);
    const last = crypto.randomBytes(100_000);
    const ok = await part(1, first, { 'content-md5': md5(first).digest('base64'), 'x-amz-checksum-crc32': crc32(first) });
    expect([ok.status, ok.headers.get('etag')]).toEqual([200, `"${md5(first).digest('hex')}"`]);
    const refusals = [
      await part(2, second, { 'x-amz-content-sha256': sha256Hex(first) }),
      await part(2, second, { 'content-md5': md5(first).digest('base64') }),
      await part(2, second, { 'x-amz-checksum-crc32': crc32(first) }),
      await part(3, last, { 'x-amz-content-sha256': sha256Hex(first) }),
      await part(3, last, { 'content-md5': md5(first).digest('base64') }),
    ];
    expect(refusals.map((r) => [r.status, /<Code>(\w+)<\/Code>/.exec(r.text)?.[1]])).toEqual([
      [400, 'XAmzContentSHA256Mismatch'],
      [400, 'BadDigest'],
      [400, 'BadDigest'],
      [400, 'XAmzContentSHA256Mismatch'],
      [400, 'BadDigest'],
    ]);
    const listed = await signedRequest(srv, 'GET', key, { 'x-amz-content-sha256': sha256Hex('') }, { query: { uploadId } });
    expect([...(await request(listed.url, { headers: listed.headers })).text.matchAll(/<PartNumber>(\d+)<\/PartNumber>/g)].map((m) => m[1])).toEqual(['1']);
    expect((await part(2, second)).status).toBe(200);
    expect((await part(3, last)).status).toBe(200);
    const xml = `<CompleteMultipartUpload>${[first, second, last].map((b, i) => `<Part><PartNumber>${i + 1}</PartNumber><ETag>"${md5(b).digest('hex')}"</ETag></Part>`).join('')}</CompleteMultipartUpload>`;
    const complete = await signedRequest(srv, 'POST', key, { 'x-amz-content-sha256': sha256Hex(xml) }, { query: { uploadId } });
    expect((await request(complete.url, { method: 'POST', headers: complete.headers, body: xml })).status).toBe(200);
    const read = await signedRequest(srv, 'GET', key, { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' });
    expect((await request(read.url, { headers: read.headers })).body.equals(Buffer.concat([first, second, last]))).toBe(true);
  });
});

/** Multipart upload over raw HTTP: start validation, part PUTs, completion checks, expiry. */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { usingS3 } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';
import { request } from '../helpers/http.js';
import { uploadBase } from '../helpers/rest.js';
import { fileRows } from '../reliability/audit.js';
import { bytes, get, postForm, until } from './helpers.js';

const MIN = 10_485_760;
const PART = 5_242_880;
// Short enough for the expiry case to wait out; long enough for the other cases on a loaded machine (8 s was not).
const srv = useServer({ env: { STOWAGE_MULTIPART_TTL_MS: '15000' } });

const start = (fields: Record<string, string>, query = '') =>
  postForm(`${srv.upload}/multipart/start/${query}`, { UPLOADCARE_PUB_KEY: srv.keys.public_key, filename: 'big.bin', content_type: 'application/octet-stream', ...fields });
const complete = (uuid: string, query = '') => postForm(`${srv.upload}/multipart/complete/${query}`, { UPLOADCARE_PUB_KEY: srv.keys.public_key, uuid });
const put = async (url: string, body: Buffer, type = 'application/octet-stream') => request(url, { method: 'PUT', headers: { 'content-type': type }, body });

function partsOf(data: Buffer, partSize = PART): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < data.length; i += partSize) out.push(data.subarray(i, i + partSize));
  return out;
}

describe.skipIf(usingS3())('POST /multipart/start/', () => {
  it('returns the uuid and one signed absolute part URL per part, in order', async () => {
    const r = await start({ size: String(MIN + 1000) });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/json');
    expect(Object.keys(r.json).sort()).toEqual(['parts', 'uuid']);
    expect(r.json.uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.json.parts).toHaveLength(3);
    (r.json.parts as string[]).forEach((u, i) => {
      const url = new URL(u);
      expect(url.origin).toBe(srv.upload);
      expect(url.pathname).toBe(`/multipart/upload/${r.json.uuid}/${i + 1}/`);
      expect(Number(url.searchParams.get('expires'))).toBeGreaterThan(Date.now() / 1000);
      expect(url.searchParams.get('sig')).toMatch(/^[0-9a-f]{64}$/);
    });
  });

  it('honours part_size and refuses the wire reference’s bad sizes with their exact texts', async () => {
    const ok = await start({ size: String(3 * MIN), part_size: String(2 * MIN) });
    expect(ok.json.parts).toHaveLength(2);
    const cases: Array<[Record<string, string>, number, string, string]> = [
      [{ size: String(MIN - 1) }, 400, 'MultipartFileSizeTooSmallError', 'File size can not be less than 10485760 bytes. Please use direct upload instead of multipart.'],
      [{ size: 'ten' }, 400, 'MultipartSizeInvalidError', 'size should be integer.'],
      [{ size: String(MIN), part_size: 'x' }, 400, 'MultipartPartSizeInvalidError', 'Multipart Upload Part Size should be an integer.'],
      [{ size: String(MIN), part_size: String(PART - 1) }, 400, 'MultipartPartSizeTooSmallError', 'Multipart Upload Part Size can not be less than 5242880 bytes.'],
      [{ size: String(MIN), part_size: '5368709121' }, 400, 'MultipartPartSizeTooBigError', 'Multipart Upload Part Size can not be more than 5368709120 bytes.'],
      [{ size: String(6 * 1024 ** 3) }, 400, 'MultipartFileSizeLimitExceededError', 'File size exceeds project limit.'],
    ];
    for (const [fields, status, code, text] of cases) {
      const plain = await start(fields);
      expect([plain.status, plain.text]).toEqual([status, text]);
      const json = await start(fields, '?jsonerrors=1');
      expect(json.status).toBe(200);
      expect(json.json).toEqual({ error: { status_code: status, content: text, error_code: code } });
    }
  });

  it('names UPLOADCARE_PUB_KEY in key errors', async () => {
    const missing = await postForm(`${srv.upload}/multipart/start/`, { filename: 'a', size: String(MIN), content_type: 'x/y' });
    expect([missing.status, missing.text]).toEqual([403, 'UPLOADCARE_PUB_KEY is required.']);
    const bad = await postForm(`${srv.upload}/multipart/start/`, { UPLOADCARE_PUB_KEY: 'nope', filename: 'a', size: String(MIN), content_type: 'x/y' });
    expect([bad.status, bad.text]).toEqual([403, 'UPLOADCARE_PUB_KEY is invalid.']);
  });
});

describe.skipIf(usingS3())('parts and completion', () => {
  it('takes parts in any order, concurrently, with retries, and assembles them byte for byte', async () => {
    const data = bytes(MIN + 12345, 7);
    const s = await start({ size: String(data.length), filename: 'C:\\tmp\\data file.bin', 'metadata[k]': 'v', UPLOADCARE_STORE: '1' });
    const urls = s.json.parts as string[];
    const parts = partsOf(data);
    // A wrong first attempt at part 2, then everything concurrently in reverse order; part 2 again.
    const wrong = await put(urls[1]!, bytes(PART, 99));
    expect(wrong.status).toBe(200);
    const results = await Promise.all(urls.map((u, i) => ({ u, i })).reverse().map(({ u, i }) => put(u, parts[i]!, 'application/json')));
    results.reverse();
    for (const r of results) {
      expect(r.status).toBe(200);
      expect(r.headers.get('etag')).toMatch(/^"[0-9a-f]{32}"$/);
    }
    // The part ETag names the part (upload, number, size), not its bytes (no client reads it, and
    // an MD5 of every part cost the receiving core about 1.4 s of CPU per GiB): the retry with
    // other bytes of the same size answers the same one; each part its own.
    expect(results[1]!.headers.get('etag')).toBe(wrong.headers.get('etag'));
    expect(results[1]!.headers.get('etag')).not.toBe(`"${crypto.createHash('md5').update(parts[1]!).digest('hex')}"`);
    expect(new Set(results.map((r) => r.headers.get('etag'))).size).toBe(parts.length);
    const done = await complete(s.json.uuid);
    expect(done.status).toBe(200);
    expect(done.json).toMatchObject({ uuid: s.json.uuid, file_id: s.json.uuid, size: data.length, total: data.length, done: data.length, original_filename: 'data file.bin', is_stored: true, is_ready: true, metadata: { k: 'v' } });
    const cdn = await fetch(`${srv.cdn}/${s.json.uuid}/`);
    expect(cdn.status).toBe(200);
    expect(Buffer.from(await cdn.arrayBuffer()).equals(data)).toBe(true);
    // Completed: a second completion and late parts are refused; the parts' bytes are gone.
    const again = await complete(s.json.uuid);
    expect([again.status, again.text]).toEqual([400, 'File is already uploaded.']);
    expect((await put(urls[0]!, parts[0]!)).text).toBe('File is already uploaded.');
    expect(fs.readdirSync(path.join(srv.server.dataDir, 'blobs', 'multipart', s.json.uuid.slice(0, 2), s.json.uuid))).toEqual([]);
  });

  it('writes the parts in place and completes without copying them: the data file becomes the blob', async () => {
    const data = bytes(2 * PART + 777, 11);
    const s = await start({ size: String(data.length), UPLOADCARE_STORE: '1' });
    const urls = s.json.parts as string[];
    const parts = partsOf(data);
    await Promise.all(urls.map(async (u, i) => expect((await put(u, parts[i]!)).status).toBe(200)));
    const dataFile = path.join(srv.server.dataDir, 'blobs', 'multipart', s.json.uuid.slice(0, 2), s.json.uuid, 'data');
    const staged = fs.statSync(dataFile);
    expect(staged.size).toBe(data.length);
    const done = await complete(s.json.uuid);
    expect(done.status, done.text).toBe(200);
    const blob = fs.statSync(path.join(srv.server.dataDir, 'blobs', 'files', s.json.uuid.slice(0, 2), s.json.uuid));
    expect(blob.ino).toBe(staged.ino);
    expect(fs.existsSync(dataFile)).toBe(false);
    const cdn = await fetch(`${srv.cdn}/${s.json.uuid}/`);
    expect(cdn.headers.get('etag')).toBe(`"${crypto.createHash('md5').update(data).digest('hex')}"`);
    expect(Buffer.from(await cdn.arrayBuffer()).equals(data)).toBe(true);
  });

  it('digests the file right when a part is rewritten after the running digest read it, or a last part ran long', async () => {
    const data = bytes(2 * PART + 999, 12);
    const parts = partsOf(data);
    const etag = `"${crypto.createHash('md5').update(data).digest('hex')}"`;
    const completedAs = async (uuid: string) => {
      const done = await complete(uuid);
      expect(done.status, done.text).toBe(200);
      const cdn = await fetch(`${srv.cdn}/${uuid}/`);
      expect(cdn.headers.get('etag')).toBe(etag);
      expect(Buffer.from(await cdn.arrayBuffer()).equals(data)).toBe(true);
    };
    // Part 1 wrong (hashed as it lands), the rest right, then part 1 again: the same sizes throughout.
    const a = await start({ size: String(data.length), UPLOADCARE_STORE: '1' });
    const aUrls = a.json.parts as string[];
    expect((await put(aUrls[0]!, bytes(PART, 5))).status).toBe(200);
    for (const i of [1, 2]) expect((await put(aUrls[i]!, parts[i]!)).status).toBe(200);
    expect((await put(aUrls[0]!, parts[0]!)).status).toBe(200);
    await completedAs(a.json.uuid);
    // The last part too long (written past the end of the file), refused, then sent right.
    const b = await start({ size: String(data.length), UPLOADCARE_STORE: '1' });
    const bUrls = b.json.parts as string[];
    for (const i of [0, 1]) expect((await put(bUrls[i]!, parts[i]!)).status).toBe(200);
    expect((await put(bUrls[2]!, bytes(PART, 6))).status).toBe(200);
    const long = await complete(b.json.uuid);
    expect([long.status, long.text]).toEqual([400, 'Uploaded size is more than expected.']);
    expect((await put(bUrls[2]!, parts[2]!)).status).toBe(200);
    await completedAs(b.json.uuid);
  });

  it('gets both whole-file digests right with parts out of order: MD5 (the CDN ETag) and SHA-256 (the content address)', async () => {
    const data = bytes(4 * PART + 4321, 21);
    const parts = partsOf(data);
    const md5 = `"${crypto.createHash('md5').update(data).digest('hex')}"`;
    /** Completes, checks the CDN's ETag, then uploads the same bytes directly: same SHA-256, same blob. */
    const digestsRight = async (uuid: string, name: string) => {
      const done = await complete(uuid);
      expect(done.status, done.text).toBe(200);
      const cdn = await fetch(`${srv.cdn}/${uuid}/`);
      expect(cdn.headers.get('etag')).toBe(md5);
      expect(Buffer.from(await cdn.arrayBuffer()).equals(data)).toBe(true);
      const direct = await uploadBase(srv.upload, srv.keys.public_key, [{ name, data }]);
      expect(direct.status, direct.text).toBe(200);
      const rows = new Map((await fileRows(srv.server)).map((r) => [r.uuid, r]));
      expect(rows.get(direct.json.file as string)?.blob_key).toBe(rows.get(uuid)?.blob_key);
      expect(rows.get(uuid)?.md5).toBe(md5.slice(1, -1));
    };
    // Shuffled, each part once: the running digest waits for part 1, then takes 1..5 in order.
    const a = await start({ size: String(data.length), UPLOADCARE_STORE: '1' });
    const aUrls = a.json.parts as string[];
    for (const i of [3, 1, 4, 0, 2]) expect((await put(aUrls[i]!, parts[i]!)).status).toBe(200);
    await digestsRight(a.json.uuid, 'shuffled.bin');
    // Part 3 first with other bytes (hashed once 1 and 2 are in), then rewritten after the rest:
    // the running digest is spoiled and completion reads the file once instead.
    const b = await start({ size: String(data.length), UPLOADCARE_STORE: '1' });
    const bUrls = b.json.parts as string[];
    expect((await put(bUrls[2]!, bytes(PART, 22))).status).toBe(200);
    for (const i of [4, 1, 0, 3]) expect((await put(bUrls[i]!, parts[i]!)).status).toBe(200);
    expect((await put(bUrls[2]!, parts[2]!)).status).toBe(200);
    await digestsRight(b.json.uuid, 'rewritten.bin');
  });

  it('answers content_info.image (and image_info) for an image at completion, as /info/ does', async () => {
    // An uncompressed PNG just over the multipart minimum.
    const png = await sharp(crypto.randomBytes(1900 * 1900 * 3), { raw: { width: 1900, height: 1900, channels: 3 } }).png({ compressionLevel: 0 }).toBuffer();
    expect(png.length).toBeGreaterThan(MIN);
    const s = await start({ size: String(png.length), filename: 'noise.png', content_type: 'image/png' });
    const urls = s.json.parts as string[];
    for (const [i, part] of partsOf(png).entries()) expect((await put(urls[i]!, part)).status).toBe(200);
    const done = await complete(s.json.uuid);
    expect(done.status, done.text).toBe(200);
    expect(done.json.is_image).toBe(true);
    expect(done.json.content_info.image).toMatchObject({ width: 1900, height: 1900, format: 'PNG' });
    expect(done.json.image_info).toEqual(done.json.content_info.image);
    const info = await get(`${srv.upload}/info/?pub_key=${srv.keys.public_key}&file_id=${s.json.uuid}`);
    expect(done.json.content_info).toEqual(info.json.content_info);
  });

  it('checks sizes at completion and lets the client fix the parts', async () => {
    const data = bytes(MIN + 10, 3);
    const s = await start({ size: String(data.length) });
    const [u1, u2, u3] = s.json.parts as string[];
    const parts = partsOf(data);
    await put(u1!, parts[0]!);
    await put(u3!, parts[2]!);
    const missing = await complete(s.json.uuid);
    expect([missing.status, missing.text]).toEqual([400, 'File size mismatch. Not all parts uploaded?']);
    await put(u2!, parts[1]!);
    await put(u3!, Buffer.concat([parts[2]!, Buffer.from('extra')]));
    const more = await complete(s.json.uuid, '?jsonerrors=1');
    expect(more.json).toEqual({ error: { status_code: 400, content: 'Uploaded size is more than expected.', error_code: 'MultipartUploadSizeTooLargeError' } });
    await put(u3!, parts[2]!);
    const ok = await complete(s.json.uuid);
    expect(ok.status).toBe(200);
    expect(ok.json.size).toBe(data.length);
  });

  it('completes once when two completions race', async () => {
    const data = bytes(MIN, 4);
    const s = await start({ size: String(data.length) });
    const parts = partsOf(data);
    await Promise.all((s.json.parts as string[]).map((u, i) => put(u, parts[i]!)));
    const [x, y] = await Promise.all([complete(s.json.uuid), complete(s.json.uuid)]);
    const [winner, loser] = x.status === 200 ? [x, y] : [y, x];
    expect(winner.status).toBe(200);
    // The other one is told to retry while the first assembles, or that it is done already.
    if (loser.status === 503) {
      expect(loser.text).toBe('File is being assembled by another request. Try again later.');
      expect(Number(loser.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    } else {
      expect(loser.status).toBe(400);
      expect(loser.text).toBe('File is already uploaded.');
    }
    const after = await complete(s.json.uuid);
    expect(after.status).toBe(400);
    expect(after.text).toBe('File is already uploaded.');
  });

  it('refuses a part larger than part_size, forged or unknown part URLs', async () => {
    const s = await start({ size: String(MIN) });
    const url = new URL(s.json.parts[0] as string);
    const big = await put(url.href, bytes(PART + 1));
    expect([big.status, big.text]).toEqual([413, 'The size of the request is too large.']);
    const forged = new URL(url);
    forged.searchParams.set('sig', '0'.repeat(64));
    expect((await put(forged.href, bytes(10))).status).toBe(403);
    const longer = new URL(url);
    longer.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 3600));
    expect((await put(longer.href, bytes(10))).status).toBe(403);
    const other = url.href.replace(`/${s.json.uuid}/1/`, `/${s.json.uuid}/2/`);
    expect((await put(other, bytes(10))).status).toBe(403);
  });

  it('answers the completion errors for unknown and malformed uuids', async () => {
    const unknown = await complete(crypto.randomUUID());
    expect([unknown.status, unknown.text]).toEqual([404, 'File is not found.']);
    const none = await postForm(`${srv.upload}/multipart/complete/`, { UPLOADCARE_PUB_KEY: srv.keys.public_key });
    expect([none.status, none.text]).toEqual([400, 'uuid is required.']);
    // Another project's upload is not found either.
    const other = await srv.server.createProject();
    const s = await start({ size: String(MIN) });
    const foreign = await postForm(`${srv.upload}/multipart/complete/`, { UPLOADCARE_PUB_KEY: other.public_key, uuid: s.json.uuid });
    expect(foreign.status).toBe(404);
  });

  it('allows a browser PUT with Content-Type through CORS preflight', async () => {
    const s = await start({ size: String(MIN) });
    const pre = await fetch(s.json.parts[0] as string, { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'PUT', 'access-control-request-headers': 'content-type' } });
    expect(pre.status).toBe(200);
    expect(pre.headers.get('access-control-allow-origin')).toBe('*');
    expect(pre.headers.get('access-control-allow-methods')).toContain('PUT');
    expect(pre.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('content-type');
  });
});

describe.skipIf(usingS3())('expiry', () => {
  it('reclaims the parts of an unfinished upload and forgets it', async () => {
    const s = await start({ size: String(MIN) });
    expect((await put(s.json.parts[0] as string, bytes(PART))).status).toBe(200);
    // On disk: the upload's one data file, written in place, and the part's marker.
    const partsDir = path.join(srv.server.dataDir, 'blobs', 'multipart', s.json.uuid.slice(0, 2), s.json.uuid);
    expect(fs.readdirSync(partsDir).sort()).toEqual(['1.done', 'data']);
    await until(async () => (fs.readdirSync(partsDir).length > 0 ? undefined : true), 40_000);
    const r = await complete(s.json.uuid);
    expect([r.status, r.text]).toEqual([404, 'File is not found.']);
    expect((await get(`${srv.upload}/info/?pub_key=${srv.keys.public_key}&file_id=${s.json.uuid}`)).status).toBe(404);
  });
});

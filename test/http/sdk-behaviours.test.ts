/**
 * Behaviours the official SDKs' own tests expect, each checked over HTTP:
 * /base/ judges the public key before the files, and the file entries of /multipart/complete/
 * and /group/ carry content_info.image for images, as /info/ does.
 */
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { useServer } from '../helpers/use-server.js';
import { request } from '../helpers/http.js';
import { postForm } from '../uploads/helpers.js';
import { postGroup, png } from '../groups/helpers.js';

const s = useServer();

describe('SDK test expectations', () => {
  it('raw POST /base/ without a key answers "UPLOADCARE_PUB_KEY is required." before any file check', async () => {
    const empty = await request(`${s.upload}/base/?jsonerrors=1`, { method: 'POST' });
    expect([empty.status, empty.json]).toEqual([200, { error: { status_code: 403, content: 'UPLOADCARE_PUB_KEY is required.', error_code: 'ProjectPublicKeyRequiredError' } }]);
    const noFile = await request(`${s.upload}/base/`, { method: 'POST', body: new FormData() });
    expect([noFile.status, noFile.text]).toEqual([403, 'UPLOADCARE_PUB_KEY is required.']);
    const form = new FormData();
    form.append('UPLOADCARE_PUB_KEY', 'unknown-key');
    expect((await request(`${s.upload}/base/`, { method: 'POST', body: form })).text).toBe('UPLOADCARE_PUB_KEY is invalid.');
    // With a valid key the missing file is what is wrong.
    const keyed = new FormData();
    keyed.append('UPLOADCARE_PUB_KEY', s.keys.public_key);
    expect((await request(`${s.upload}/base/`, { method: 'POST', body: keyed })).text).toBe('Request does not contain files.');
    const bodyless = await request(`${s.upload}/base/?UPLOADCARE_PUB_KEY=${s.keys.public_key}`, { method: 'POST' });
    expect([bodyless.status, bodyless.text]).toEqual([400, 'Request does not contain files.']);
  });

  it('/group/ file entries carry content_info.image like /info/', async () => {
    const uuid = await s.uploadFile('red.png', await png(30, 12));
    const info = await request(`${s.upload}/info/?pub_key=${s.keys.public_key}&file_id=${uuid}`);
    expect(info.json.content_info.image).toMatchObject({ width: 30, height: 12, format: 'PNG' });
    const g = await postGroup(s.server, [['pub_key', s.keys.public_key], ['files[0]', uuid]]);
    expect(g.status, g.text).toBe(200);
    expect(g.json.files[0].content_info).toEqual(info.json.content_info);
    expect(g.json.files[0].image_info).toMatchObject({ width: 30, height: 12 });
  });

  it('/multipart/complete/ of an image carries content_info.image like /info/', async () => {
    // A 10 MiB+ PNG (multipart's floor): uncompressed noise.
    const big = await sharp({ create: { width: 2000, height: 1800, channels: 3, noise: { type: 'gaussian', mean: 128, sigma: 40 } } })
      .png({ compressionLevel: 0 })
      .toBuffer();
    expect(big.length).toBeGreaterThan(10_485_760);
    const start = await postForm(`${s.upload}/multipart/start/`, { UPLOADCARE_PUB_KEY: s.keys.public_key, filename: 'noise.png', content_type: 'image/png', size: String(big.length) });
    expect(start.status, start.text).toBe(200);
    const parts = start.json.parts as string[];
    const partSize = 5_242_880;
    for (const [i, url] of parts.entries()) {
      expect((await fetch(url, { method: 'PUT', body: big.subarray(i * partSize, (i + 1) * partSize) })).status).toBe(200);
    }
    const done = await postForm(`${s.upload}/multipart/complete/`, { UPLOADCARE_PUB_KEY: s.keys.public_key, uuid: start.json.uuid as string });
    expect(done.status, done.text).toBe(200);
    expect(done.json.content_info.image).toMatchObject({ width: 2000, height: 1800, format: 'PNG' });
    const info = await request(`${s.upload}/info/?pub_key=${s.keys.public_key}&file_id=${start.json.uuid as string}`);
    expect(done.json.content_info).toEqual(info.json.content_info);
  }, 120_000);
});

/**
 * The official JS REST client's conversion calls, unchanged but for its base URL: convert,
 * conversionJobStatus and conversionInfo for documents (PDF pages through poppler) and video.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { ConversionType, UploadcareAuthSchema, conversionInfo, conversionJobStatus, convert, fileInfo } from '@uploadcare/rest-client';
import { useServer } from '../helpers/use-server.js';
import { makePdf, makeVideo } from './helpers.js';

const s = useServer();
let auth: UploadcareAuthSchema;
const settings = () => ({ authSchema: auth, apiBaseURL: s.rest });

beforeAll(() => {
  auth = new UploadcareAuthSchema({ publicKey: s.keys.public_key, secretKey: s.keys.secret_key });
});

async function finished<T extends ConversionType>(type: T, token: number) {
  const until = Date.now() + 180_000;
  for (;;) {
    const job = await conversionJobStatus({ type, token }, settings());
    if (job.status !== 'pending' && job.status !== 'processing') return job;
    if (Date.now() > until) throw new Error(`still ${job.status}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

describe('official REST client: conversions', () => {
  it('documents: convert with saveInGroup, job status, conversion info', { timeout: 240_000 }, async () => {
    const pdf = await s.uploadFile('two.pdf', makePdf(2, 144, 72));
    const path = `${pdf}/document/-/format/png/-/dpi/50/`;
    const res = await convert({ type: ConversionType.DOCUMENT, paths: [path, 'bogus/document/'], store: true, saveInGroup: true }, settings());
    expect(res.problems).toEqual({ 'bogus/document/': 'Bad path "bogus/document/". Use UUID or CDN URL' });
    expect(res.result).toHaveLength(1);
    expect(res.result[0]).toMatchObject({ originalSource: path, uuid: expect.stringMatching(/^[0-9a-f-]{36}$/), token: expect.any(Number) });
    const status = await finished(ConversionType.DOCUMENT, res.result[0]!.token);
    expect(status).toMatchObject({ status: 'finished', error: null, result: { uuid: res.result[0]!.uuid } });
    const out = await fileInfo({ uuid: res.result[0]!.uuid }, settings());
    expect(out.mimeType).toBe('image/png');
    const m = await sharp(Buffer.from(await (await fetch(`${s.cdn}/${out.uuid}/`)).arrayBuffer())).metadata();
    expect([m.width, m.height]).toEqual([100, 50]);
    // The conversion's path on the CDN answers its result; another target is not converted yet.
    const viaPath = await fetch(`${s.cdn}/${path}`);
    expect(viaPath.status).toBe(200);
    expect(viaPath.headers.get('content-type')).toBe('image/png');
    const direct = Buffer.from(await (await fetch(`${s.cdn}/${out.uuid}/`)).arrayBuffer());
    expect(Buffer.from(await viaPath.arrayBuffer()).equals(direct)).toBe(true);
    expect((await fetch(`${s.cdn}/${pdf}/document/-/format/jpg/`)).status).toBe(404);
    expect((await fetch(`${s.cdn}/${pdf}/document/-/format/xyz/`)).status).toBe(400);
    expect((await fetch(`${s.cdn}/3b1a7c5e-0000-4000-8000-000000000000/document/-/format/png/`)).status).toBe(404);
    const info = await conversionInfo({ uuid: pdf }, settings());
    expect(info.error).toBeNull();
    expect(info.format.name).toBe('pdf');
    expect(info.format.conversionFormats).toContainEqual({ name: 'png' });
    expect(info.convertedGroups.png).toMatch(/^[0-9a-f-]{36}~2$/);
  });

  it('video: convert, job status with the thumbnails group', { timeout: 240_000 }, async () => {
    const mp4 = await s.uploadFile('v.mp4', makeVideo('v.mp4', 1, '96x64', ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p'], false));
    const path = `${mp4}/video/-/size/48x32/change_ratio/-/format/webm/-/thumbs~2/`;
    const res = await convert({ type: ConversionType.VIDEO, paths: [path], store: false }, settings());
    expect(res.problems).toEqual({});
    expect(res.result[0]).toMatchObject({ originalSource: path, thumbnailsGroupUuid: expect.stringMatching(/~2$/) });
    const status = await finished(ConversionType.VIDEO, res.result[0]!.token);
    expect(status).toMatchObject({ status: 'finished', error: null, result: { uuid: res.result[0]!.uuid, thumbnailsGroupUuid: res.result[0]!.thumbnailsGroupUuid } });
    const out = await fileInfo({ uuid: res.result[0]!.uuid }, settings());
    expect(out.datetimeStored).toBeNull();
    expect(out.contentInfo?.video?.video[0]).toMatchObject({ codec: 'vp9', width: 48, height: 32 });
    const viaPath = await fetch(`${s.cdn}/${path}`);
    expect(viaPath.status).toBe(200);
    expect(viaPath.headers.get('content-type')).toBe('video/webm');
    expect(Number(viaPath.headers.get('content-length'))).toBe(out.size);
  });
});

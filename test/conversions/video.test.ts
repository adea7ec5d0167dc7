/**
 * Video conversion over real HTTP with real ffmpeg: inputs made by ffmpeg (testsrc + sine), every
 * size mode, the three containers, cut, thumbnail groups, results with real content_info.video,
 * refusals in `problems`, and a corrupt video failing its job.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { useServer } from '../helpers/use-server.js';
import { png } from '../groups/helpers.js';
import { makeVideo, waitForJob } from './helpers.js';

const s = useServer({ env: { STOWAGE_CONVERT_VIDEO_CONCURRENCY: '2' } });
let mp4: string;

beforeAll(async () => {
  // 4 s of 320x240 H.264 with AAC audio.
  mp4 = await s.uploadFile('clip.mp4', makeVideo('clip.mp4', 4, '320x240', ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest']));
}, 180_000);

const convert = (body: unknown) => s.call('POST', '/convert/video/', { body: JSON.stringify(body) });
const info = async (uuid: string) => (await s.call('GET', `/files/${uuid}/`)).json;

describe('video conversion', () => {
  it('converts with each size mode and container; results carry content_info.video; thumbnails make a group', { timeout: 300_000 }, async () => {
    const paths = [
      `${mp4}/video/-/size/160x160/preserve_ratio/`,
      `${mp4}/video/-/size/160x160/change_ratio/-/format/webm/`,
      `${mp4}/video/-/size/160x80/scale_crop/-/quality/lighter/-/format/ogg/`,
      `${mp4}/video/-/size/160x160/add_padding/-/cut/0:00:01/0:00:02/-/thumbs~3/`,
    ];
    const r = await convert({ paths, store: '1' });
    expect(r.status, r.text).toBe(200);
    expect(r.json.problems).toEqual({});
    expect(r.json.result.map((x: { original_source: string }) => x.original_source)).toEqual(paths);
    expect(r.json.result[0].thumbnails_group_uuid).toMatch(/^[0-9a-f-]{36}~1$/);
    expect(r.json.result[3].thumbnails_group_uuid).toMatch(/^[0-9a-f-]{36}~3$/);
    const done = await Promise.all(r.json.result.map((x: { token: number }) => waitForJob(s.call, 'video', x.token)));
    for (const [i, d] of done.entries()) {
      expect(d, JSON.stringify(d)).toMatchObject({ status: 'finished', error: null, result: { uuid: r.json.result[i].uuid, thumbnails_group_uuid: r.json.result[i].thumbnails_group_uuid } });
    }
    const expected = [
      { format: 'mp4', codec: 'h264', w: 160, h: 120, audio: 'aac', ms: 4000 },
      { format: 'webm', codec: 'vp9', w: 160, h: 160, audio: 'opus', ms: 4000 },
      { format: 'ogg', codec: 'theora', w: 160, h: 80, audio: 'vorbis', ms: 4000 },
      { format: 'mp4', codec: 'h264', w: 160, h: 160, audio: 'aac', ms: 2000 },
    ];
    for (const [i, e] of expected.entries()) {
      const f = await info(r.json.result[i].uuid);
      expect(f.is_ready).toBe(true);
      expect(f.mime_type).toBe(`video/${e.format}`);
      const v = f.content_info.video;
      expect(v.format, JSON.stringify(v)).toBe(e.format);
      expect(v.video[0]).toMatchObject({ codec: e.codec, width: e.w, height: e.h });
      expect(v.audio[0].codec).toBe(e.audio);
      expect(Math.abs(v.duration - e.ms)).toBeLessThan(300);
    }
    // add_padding: the 4:3 picture sits in the middle of a black 160x160 frame.
    const group = await s.call('GET', `/groups/${r.json.result[3].thumbnails_group_uuid}/`);
    expect(group.status, group.text).toBe(200);
    expect(group.json.files.length).toBe(3);
    for (const f of group.json.files as Array<{ uuid: string }>) {
      const bytes = Buffer.from(await (await fetch(`${s.cdn}/${f.uuid}/`)).arrayBuffer());
      const img = sharp(bytes);
      const m = await img.metadata();
      expect([m.format, m.width, m.height]).toEqual(['jpeg', 160, 160]);
      const { data } = await img.raw().toBuffer({ resolveWithObject: true });
      // Top rows are padding (black), the middle row is picture.
      expect(data[0]! + data[1]! + data[2]!).toBeLessThan(30);
      const mid = (80 * 160 + 80) * 3;
      expect(data[mid]! + data[mid + 1]! + data[mid + 2]!).toBeGreaterThan(30);
    }
  });

  it('answers bad paths in problems', async () => {
    const image = await s.uploadFile('photo.png', await png(20, 20), { type: 'image/png' });
    const bad = {
      'nope/video/': 'Bad path "nope/video/". Use UUID or CDN URL',
      [`${mp4}/video/-/format/avi/`]: 'unsupported target format "avi"',
      [`${image}/video/`]: 'not a video',
      [`${mp4}/video/-/size/160x160/stretch/`]: 'unknown size mode "stretch"',
      [`${mp4}/video/-/thumbs~2/-/format/webm/`]: 'must be the last operation',
      [`${mp4}/video/-/cut/abc/end/`]: '"cut" takes',
      [`${mp4}/video/-/thumbs~99/`]: 'from 1 to 50',
      [`${mp4}/document/-/format/pdf/`]: 'Use UUID or CDN URL',
    };
    const r = await convert({ paths: Object.keys(bad) });
    expect(r.status, r.text).toBe(200);
    expect(r.json.result).toEqual([]);
    for (const [p, text] of Object.entries(bad)) expect(r.json.problems[p]).toContain(text);
    expect((await convert({ paths: [] })).json).toEqual({ detail: '“paths” parameter is required.' });
    expect((await s.call('GET', '/convert/video/status/424242/')).status).toBe(404);
  });

  it('a corrupt video fails its job with a clear error; the server carries on', { timeout: 120_000 }, async () => {
    const good = makeVideo('x.mp4', 1, '64x48', ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p'], false);
    // The container header survives, the frames are garbage.
    const broken = await s.uploadFile('broken.mp4', Buffer.concat([good.subarray(0, 64), Buffer.alloc(20_000, 0x17)]));
    const r = await convert({ paths: [`${broken}/video/`, `${mp4}/video/-/cut/0:00:09/end/`] });
    expect(r.json.problems).toEqual({});
    const [a, b] = await Promise.all(r.json.result.map((x: { token: number }) => waitForJob(s.call, 'video', x.token)));
    expect(a.status).toBe('failed');
    expect(a.error).toMatch(/not a video ffmpeg can read|ffmpeg failed/);
    expect(b.status).toBe('failed');
    expect(b.error).toContain('after the end of the video');
    expect((await s.call('GET', `/files/${mp4}/`)).status).toBe(200);
  });
});

/**
 * What an upload's bytes say about it, for formats sniffing alone gets wrong or incomplete:
 * videos get content_info.video (ffprobe) on REST and video_info on the Upload API; a TIFF whose
 * directory sits after the first 64 KiB is still image/tiff. Runs on S3 too (STOWAGE_TEST_S3=1).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useServer } from '../helpers/use-server.js';
import { makeVideo } from '../conversions/helpers.js';

const s = useServer();

const uploadInfo = async (uuid: string) => (await fetch(`${s.upload}/info/?pub_key=${s.keys.public_key}&file_id=${uuid}`)).json();

describe('video facts at upload', () => {
  it('an MP4 (index at the end, past the sniffed head) gets content_info.video and video_info', async () => {
    const data = makeVideo('clip.mp4', 3, '320x240', ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-b:v', '1M', '-c:a', 'aac', '-ac', '2', '-ar', '44100', '-shortest']);
    // ffmpeg writes the moov box last unless asked for faststart.
    expect(data.indexOf('moov')).toBeGreaterThan(64 * 1024);
    const uuid = await s.uploadFile('clip.mp4', data);
    const rest = (await s.call('GET', `/files/${uuid}/`)).json;
    expect(rest.mime_type).toBe('video/mp4');
    expect(rest.is_image).toBe(false);
    const v = rest.content_info.video;
    expect(rest.content_info.mime).toEqual({ mime: 'video/mp4', type: 'video', subtype: 'mp4' });
    expect(v.format).toBe('mp4');
    expect(Math.abs(v.duration - 3000)).toBeLessThan(100);
    expect(v.bitrate).toBeGreaterThan(100);
    expect(v.video).toEqual([{ codec: 'h264', width: 320, height: 240, bitrate: expect.any(Number), frame_rate: 25 }]);
    expect(v.video[0].bitrate).toBeGreaterThan(100);
    expect(v.audio).toEqual([{ codec: 'aac', bitrate: expect.any(Number), channels: 2, sample_rate: 44100 }]);
    const info = await uploadInfo(uuid);
    expect(info.video_info).toEqual({ duration: v.duration, format: 'mp4', bitrate: v.bitrate, audio: v.audio[0], video: v.video[0] });
    expect(info.content_info.video).toEqual(v);
  });

  it('a WebM without audio has an empty audio list; a corrupt video has no video facts', async () => {
    const webm = makeVideo('a.webm', 1, '64x48', ['-c:v', 'libvpx', '-deadline', 'realtime'], false);
    const uuid = await s.uploadFile('a.webm', webm);
    const v = (await s.call('GET', `/files/${uuid}/`)).json.content_info.video;
    expect(v).toMatchObject({ format: 'webm', audio: [], video: [{ codec: 'vp8', width: 64, height: 48 }] });
    const broken = Buffer.concat([webm.subarray(0, 40), Buffer.alloc(5000, 0x11)]);
    const bad = await s.uploadFile('b.webm', broken);
    const f = (await s.call('GET', `/files/${bad}/`)).json;
    expect(f.content_info.mime.mime).toBe('video/webm');
    expect(f.content_info.video).toBeUndefined();
    expect((await uploadInfo(bad)).video_info).toBeNull();
  });

  it('a TIFF whose directory is after the first 64 KiB is image/tiff with its size', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-tiff-'));
    const file = path.join(dir, 'big.tiff');
    execFileSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=1', '-frames:v', '1', '-y', file]);
    const data = fs.readFileSync(file);
    fs.rmSync(dir, { recursive: true, force: true });
    expect(data.readUInt32LE(4)).toBeGreaterThan(64 * 1024);
    const uuid = await s.uploadFile('scan', data);
    const f = (await s.call('GET', `/files/${uuid}/`)).json;
    expect(f.content_info.mime.mime).toBe('image/tiff');
    expect(f.is_image).toBe(true);
    expect(f.content_info.image).toMatchObject({ format: 'TIFF', width: 320, height: 240 });
  });
});

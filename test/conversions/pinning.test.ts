/**
 * ffprobe and ffmpeg read a file as the container it was sniffed as, by the file protocol only,
 * confined to that file: an HLS playlist disguised as a video (named .mp4 or .avi, sniffed as one or
 * not) whose entries are `http:`, `file:`, `concat:` and `subfile:` URLs opens none of them. Real
 * ffprobe and ffmpeg on real files; a loopback listener counts requests, and a real MPEG-TS video
 * outside the input's folder (322x122, a size no input here has) shows whether it was read.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeVideo } from '../../src/media/pipeline/video-probe.js';
import { convertVideo } from '../../src/conversions/video.js';
import { ToolError } from '../../src/conversions/tool.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-pinning-'));
const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-pinning-outside-'));
const secretVideo = path.join(outside, 'secret.ts');
let requests = 0;
const listener = http.createServer((_req, res) => {
  requests++;
  res.end();
});
let base = '';

beforeAll(async () => {
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(listener.address() as { port: number }).port}`;
  execFileSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc=size=322x122:rate=5:duration=1', '-f', 'mpegts', '-y', secretVideo]);
});
afterAll(() => {
  listener.close();
  fs.rmSync(dir, { recursive: true, force: true });
  fs.rmSync(outside, { recursive: true, force: true });
});

/** A playlist whose every entry points outside: the listener, the local video, and wrappers of it. */
function playlist(): string {
  const entries = [`${base}/seg.ts`, `file:${secretVideo}`, secretVideo, `concat:${secretVideo}|${secretVideo}`, `subfile,,start,0,end,0,,:${secretVideo}`];
  return `#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXT-X-MEDIA-SEQUENCE:0\n${entries.map((e) => `#EXTINF:1.0,\n${e}\n`).join('')}#EXT-X-ENDLIST\n`;
}

function write(name: string, data: string | Buffer): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, data);
  return file;
}

describe('ffprobe and ffmpeg pinned to their input', () => {
  it('the secret video is readable: ffprobe unpinned, given the playlist, reports it (the attack works without the pins)', () => {
    const file = write('check.m3u8', playlist());
    const out = execFileSync('ffprobe', ['-v', 'quiet', '-protocol_whitelist', 'file,concat,subfile', '-print_format', 'json', '-show_streams', file]).toString();
    expect(out).toContain('"width": 322');
  });

  it('a playlist named and sniffed as a video opens none of its entries', async () => {
    const before = requests;
    const mp4 = write('playlist.mp4', playlist());
    const avi = write('playlist.avi', playlist());
    // As an upload probes it (the sniffed subtype names the demuxer), and with no subtype at all.
    for (const [file, subtype] of [[mp4, 'mp4'], [avi, 'x-msvideo'], [mp4, ''], [avi, '']] as const) {
      expect(await probeVideo(file, subtype), `${file} as "${subtype}"`).toBeNull();
    }
    // A real AVI followed by the playlist: the AVI is read, the playlist is not.
    const realAvi = execFileSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc=size=64x48:rate=5:duration=1', '-c:v', 'mjpeg', '-f', 'avi', '-']);
    const carrier = write('carrier.avi', Buffer.concat([realAvi, Buffer.from(playlist())]));
    const info = await probeVideo(carrier, 'x-msvideo');
    expect(info?.video.map((v) => [v.width, v.height])).toEqual([[64, 48]]);
    // A conversion of the playlist fails as not a video, having read nothing.
    const work = path.join(dir, 'work');
    const err = await convertVideo({ input: mp4, target: { size: null, quality: 'normal', format: 'mp4', cut: null, thumbs: 1 }, workDir: work, deadline: Date.now() + 60_000 }).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(ToolError);
    expect((err as Error).message).toMatch(/not a video/);
    expect(requests - before).toBe(0);
  });
});

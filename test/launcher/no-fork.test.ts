/**
 * The server never forks itself to start a tool (a fork copies the server's page
 * tables on the event loop, 60 ms at 1.6 GB). Watched from outside with strace on the running
 * server while it rasterizes an SVG, reads an SVG's size, probes an uploaded video, turns a GIF into
 * a video and converts a PDF page: each of those starts a child, and no thread of the server may
 * make a process-creating clone (one without CLONE_THREAD) for it. The launcher helper does.
 */
import { describe, expect, it } from 'vitest';
import { haveStrace, traced } from '../helpers/strace.js';
import { useServer } from '../helpers/use-server.js';
import { get, put, putFile } from '../cdn/helpers.js';
import * as fx from '../media/fixtures.js';
import { makePdf, makeVideo, waitForJob } from '../conversions/helpers.js';

const s = useServer();

/** Process and thread creation by every thread of `pid` while `work` runs. */
const traceClones = (pid: number, work: () => Promise<void>) => traced(pid, ['-e', 'trace=clone,clone3,fork,vfork'], work);

describe.skipIf(!haveStrace)('tools are started without forking the server', () => {
  it('SVG rasterization and size, video probe, gif2video and a PDF page conversion: no fork by the server', { timeout: 180_000 }, async () => {
    const svg = await put(s.server, s.keys, 'shape.svg', '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"><rect width="40" height="20" fill="#00f"/></svg>');
    const gif = await putFile(s.server, s.keys, await fx.animatedGif(), 'anim.gif');
    const pdf = await s.uploadFile('two.pdf', makePdf(2, 200, 100));
    const video = makeVideo('clip.webm', 1, '160x120', ['-c:v', 'libvpx-vp9', '-b:v', '200k', '-deadline', 'realtime'], false);
    const lines = await traceClones(s.server.child.pid as number, async () => {
      const png = await get(s.server, `/${svg}/-/rasterize/-/format/png/`);
      expect(png.status, png.text).toBe(200);
      const json = await get(s.server, `/${svg}/-/rasterize/-/json/`);
      expect(JSON.parse(json.text)).toMatchObject({ width: 40, height: 20 });
      const uuid = await s.uploadFile('clip.webm', video);
      expect((await s.call('GET', `/files/${uuid}/`)).json.content_info.video.video[0]).toMatchObject({ width: 160, height: 120 });
      const mp4 = await get(s.server, `/${gif}/gif2video/`);
      expect(mp4.status, mp4.text).toBe(200);
      const r = await s.call('POST', '/convert/document/', { body: JSON.stringify({ paths: [`${pdf}/document/-/format/png/-/page/2/-/dpi/36/`] }) });
      expect(r.status, r.text).toBe(200);
      expect(await waitForJob(s.call, 'document', r.json.result[0].token)).toMatchObject({ status: 'finished', error: null });
    });
    const clones = lines.filter((l) => /\b(clone3?|v?fork)\(/.test(l));
    // The work above starts threads now and then (libuv, libvips), which is fine: only new processes count.
    const forks = clones.filter((l) => !/CLONE_THREAD/.test(l));
    expect(forks).toEqual([]);
  });
});

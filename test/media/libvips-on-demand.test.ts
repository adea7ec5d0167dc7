/**
 * sharp (libvips) is loaded by a node's first image, not at start (media/lazy-sharp.ts): a node
 * that has handled no image keeps libvips out of its memory, and one that has handled an image has libvips mapped and renders.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { uploadBase } from '../helpers/rest.js';
import { useServer } from '../helpers/use-server.js';

const srv = useServer();

/** Whether the server process has libvips mapped (/proc, Linux). */
function libvipsMapped(): boolean {
  return /libvips/.test(fs.readFileSync(`/proc/${srv.server.child.pid}/maps`, 'utf8'));
}

describe('libvips on demand', () => {
  it('is not loaded by the start nor by a file that is no image, and is by the first render', async () => {
    expect(libvipsMapped()).toBe(false);
    const bin = await uploadBase(srv.upload, srv.keys.public_key, [{ name: 'data.bin', data: crypto.randomBytes(100_000) }]);
    expect(bin.status).toBe(200);
    expect((await fetch(`${srv.cdn}/${bin.json.file}/`)).status).toBe(200);
    expect(libvipsMapped()).toBe(false);

    const png = await sharp({ create: { width: 40, height: 20, channels: 3, background: '#123456' } }).png().toBuffer();
    const image = await uploadBase(srv.upload, srv.keys.public_key, [{ name: 'pic.png', data: png }]);
    expect(image.status).toBe(200);
    const r = await fetch(`${srv.cdn}/${image.json.file}/-/resize/10x/-/format/png/`);
    expect(r.status).toBe(200);
    expect(await sharp(Buffer.from(await r.arrayBuffer())).metadata()).toMatchObject({ format: 'png', width: 10, height: 5 });
    expect(libvipsMapped()).toBe(true);
  });
});

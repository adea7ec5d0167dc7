/**
 * Input formats sharp does not read natively (BMP, TGA, PCX, HEIC) are recognised as images at
 * upload (is_image, image_info dimensions) and processed through the CDN.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { useServer } from '../helpers/use-server.js';
import * as fx from '../media/fixtures.js';
import { dims, get, near, pixel, put } from './helpers.js';

const srv = useServer();

const C = { r: 200, g: 30, b: 40 };

describe('upload recognises BMP, TGA, PCX and HEIC as images', () => {
  test.each([
    ['bmp', 'BMP', 'image/bmp', () => fx.bmp(32, 24, C)],
    ['tga', 'TGA', 'image/x-tga', () => fx.tga(32, 24, C)],
    ['pcx', 'PCX', 'image/x-pcx', () => fx.pcx(32, 24, C)],
    ['heic', 'HEIC', 'image/heic', () => join(fx.FIXTURES, 'sample.heic')],
  ])('%s', async (ext, format, mime, make) => {
    const id = await put(srv.server, srv.keys, `pic.${ext}`, readFileSync(make()));
    const info = await fetch(`${srv.upload}/info/?pub_key=${srv.keys.public_key}&file_id=${id}`).then((r) => r.json());
    expect(info).toMatchObject({ is_image: true, mime_type: mime });
    expect(info.image_info).toMatchObject({ format, width: 32, height: 24 });
    const r = await get(srv.server, `/${id}/-/resize/16x/-/format/png/`);
    expect(r.status, r.text).toBe(200);
    expect(await dims(r.body)).toEqual([16, 12, 'png']);
    expect(near(await pixel(r.body, 8, 6), [200, 30, 40, 255], 20)).toBe(true);
    const json = JSON.parse((await get(srv.server, `/${id}/-/json/`)).text);
    expect(json).toMatchObject({ id, width: 32, height: 24 });
  });
});

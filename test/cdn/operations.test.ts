/**
 * Every operation family through the real CDN over HTTP: the response is decoded with sharp and its
 * real properties checked (dimensions, format, pixels). Fixture quadrants: red top-left, green
 * top-right, blue bottom-left, white bottom-right.
 */
import { beforeAll, describe, expect, test } from 'vitest';
import sharp from 'sharp';
import { useServer } from '../helpers/use-server.js';
import * as fx from '../media/fixtures.js';
import { dims, get, pixel, put, putFile } from './helpers.js';

const srv = useServer();
let quad: string; // 200x100 PNG quadrants
let photo: string; // 200x100 JPEG quadrants
let exif: string; // 60x40 JPEG, EXIF orientation 6 + GPS

beforeAll(async () => {
  quad = await putFile(srv.server, srv.keys, await fx.quadrants(200, 100, 'png'), 'quad.png');
  photo = await putFile(srv.server, srv.keys, await fx.quadrants(200, 100, 'jpeg'), 'photo.jpg');
  exif = await putFile(srv.server, srv.keys, await fx.exifJpeg(), 'exif.jpg');
});

const RED = [255, 0, 0, 255], GREEN = [0, 255, 0, 255], BLUE = [0, 0, 255, 255], WHITE = [255, 255, 255, 255];

describe('compression', () => {
  test('format, quality, progressive', async () => {
    const webp = await get(srv.server, `/${quad}/-/format/webp/`);
    expect(webp.status).toBe(200);
    expect(webp.headers.get('content-type')).toBe('image/webp');
    expect(await dims(webp.body)).toEqual([200, 100, 'webp']);
    const png = await get(srv.server, `/${photo}/-/format/png/`);
    expect(await dims(png.body)).toEqual([200, 100, 'png']);
    const best = await get(srv.server, `/${photo}/-/format/jpeg/-/quality/best/`);
    const lightest = await get(srv.server, `/${photo}/-/format/jpeg/-/quality/lightest/`);
    expect(best.body.length).toBeGreaterThan(lightest.body.length);
    const prog = await get(srv.server, `/${photo}/-/format/jpeg/-/progressive/yes/`);
    expect((await sharp(prog.body).metadata()).isProgressive).toBe(true);
    expect((await sharp(best.body).metadata()).isProgressive).toBe(false);
  });

  test('strip_meta: all removes EXIF, none keeps it', async () => {
    const all = await get(srv.server, `/${exif}/-/preview/-/strip_meta/all/`);
    expect((await sharp(all.body).metadata()).exif).toBeUndefined();
    const none = await get(srv.server, `/${exif}/-/preview/-/strip_meta/none/`);
    expect((await sharp(none.body).metadata()).exif?.toString('latin1')).toContain('StowageCam');
  });

  test('format/auto follows Accept and says Vary: Accept', async () => {
    const path = `/${photo}/-/format/auto/-/resize/100x/`;
    const webp = await get(srv.server, path, { accept: 'image/webp,*/*' });
    const avif = await get(srv.server, path, { accept: 'image/avif,image/webp,*/*' });
    const none = await get(srv.server, path, { accept: 'image/png,*/*' });
    expect([webp.headers.get('content-type'), avif.headers.get('content-type'), none.headers.get('content-type')]).toEqual(['image/webp', 'image/avif', 'image/jpeg']);
    expect((await dims(webp.body))[2]).toBe('webp');
    expect((await dims(avif.body))[2]).toBe('heif');
    for (const r of [webp, avif, none]) expect(r.headers.get('vary')).toBe('Accept');
    expect(new Set([webp, avif, none].map((r) => r.headers.get('etag'))).size).toBe(3);
    expect((await get(srv.server, `/${photo}/-/format/webp/`, { accept: 'image/avif' })).headers.get('vary')).toBeNull();
  });
});

describe('resize and crop', () => {
  test('resize, preview, scale_crop, X-Image-Width/Height', async () => {
    const r = await get(srv.server, `/${quad}/-/resize/50x/`);
    expect(await dims(r.body)).toEqual([50, 25, 'png']);
    expect([r.headers.get('x-image-width'), r.headers.get('x-image-height')]).toEqual(['50', '25']);
    expect((await dims((await get(srv.server, `/${quad}/-/preview/40x40/`)).body)).slice(0, 2)).toEqual([40, 20]);
    expect((await dims((await get(srv.server, `/${quad}/-/scale_crop/50x50/center/`)).body)).slice(0, 2)).toEqual([50, 50]);
  });

  test('crop by offset and by alignment returns the region of the known colour', async () => {
    const tl = await get(srv.server, `/${quad}/-/crop/50x25/0,0/`);
    expect(await dims(tl.body)).toEqual([50, 25, 'png']);
    expect(await pixel(tl.body, 25, 12)).toEqual(RED);
    const br = await get(srv.server, `/${quad}/-/crop/50x25/150,75/`);
    expect(await pixel(br.body, 25, 12)).toEqual(WHITE);
    const right = await get(srv.server, `/${quad}/-/crop/100x100/right/`);
    expect(await pixel(right.body, 5, 5)).toEqual(GREEN);
    expect(await pixel(right.body, 5, -5)).toEqual(WHITE);
  });

  test('border_radius makes corners transparent, trim removes a solid border', async () => {
    const r = await get(srv.server, `/${quad}/-/border_radius/50p/`);
    expect(r.headers.get('content-type')).toBe('image/png');
    expect((await pixel(r.body, 0, 0))[3]).toBe(0);
    expect((await pixel(r.body, 100, 50))[3]).toBe(255);
    const framed = await sharp(fx.quadrantPixels(40, 20), { raw: { width: 40, height: 20, channels: 3 } })
      .extend({ top: 10, bottom: 10, left: 10, right: 10, background: '#000000' }).png().toBuffer();
    const id = await put(srv.server, srv.keys, 'framed.png', framed);
    expect((await dims((await get(srv.server, `/${id}/-/trim/`)).body)).slice(0, 2)).toEqual([40, 20]);
  });
});

describe('rotation', () => {
  test('rotate/90 swaps dimensions; mirror and flip move the quadrants', async () => {
    expect((await dims((await get(srv.server, `/${quad}/-/rotate/90/`)).body)).slice(0, 2)).toEqual([100, 200]);
    expect(await pixel((await get(srv.server, `/${quad}/-/mirror/`)).body, 5, 5)).toEqual(GREEN);
    expect(await pixel((await get(srv.server, `/${quad}/-/flip/`)).body, 5, 5)).toEqual(BLUE);
  });

  test('EXIF orientation is applied by any transformation, unless autorotate/no', async () => {
    expect((await dims((await get(srv.server, `/${exif}/-/preview/`)).body)).slice(0, 2)).toEqual([40, 60]);
    expect((await dims((await get(srv.server, `/${exif}/-/autorotate/no/-/preview/`)).body)).slice(0, 2)).toEqual([60, 40]);
  });
});

describe('overlays', () => {
  test('image overlay by uuid of the same project; another project\'s file is refused', async () => {
    const base = await put(srv.server, srv.keys, 'red.png', await sharp({ create: { width: 100, height: 100, channels: 3, background: '#ff0000' } }).png().toBuffer());
    const blue = await put(srv.server, srv.keys, 'blue.png', await sharp({ create: { width: 20, height: 20, channels: 3, background: '#0000ff' } }).png().toBuffer());
    const r = await get(srv.server, `/${base}/-/overlay/${blue}/50px50p/center/`);
    expect(r.status).toBe(200);
    expect(await pixel(r.body, 50, 50)).toEqual(BLUE);
    expect(await pixel(r.body, 5, 5)).toEqual(RED);
    const other = await srv.server.createProject();
    const foreign = await put(srv.server, other, 'blue.png', await sharp({ create: { width: 20, height: 20, channels: 3, background: '#0000ff' } }).png().toBuffer());
    const refused = await get(srv.server, `/${base}/-/overlay/${foreign}/50px50p/center/`);
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('overlay');
  });

  test('rect and text', async () => {
    const white = await put(srv.server, srv.keys, 'white.png', await sharp({ create: { width: 100, height: 100, channels: 3, background: '#ffffff' } }).png().toBuffer());
    const rect = await get(srv.server, `/${white}/-/rect/00ff00/50px50p/0,0/`);
    expect(await pixel(rect.body, 10, 10)).toEqual(GREEN);
    expect(await pixel(rect.body, 90, 90)).toEqual(WHITE);
    const text = await get(srv.server, `/${white}/-/font/bold/40/000000/-/text/100px100p/center/Hi%20~s/`);
    expect(text.status).toBe(200);
    const { data } = await sharp(text.body).greyscale().raw().toBuffer({ resolveWithObject: true });
    expect(data.filter((v) => v < 128).length).toBeGreaterThan(50);
  });
});

describe('colours and definition', () => {
  test('grayscale gives equal channels, invert inverts', async () => {
    const g = await pixel((await get(srv.server, `/${quad}/-/grayscale/-/format/png/`)).body, 5, 5);
    expect(g[0]).toBe(g[1]);
    expect(g[1]).toBe(g[2]);
    expect(await pixel((await get(srv.server, `/${quad}/-/invert/`)).body, 5, 5)).toEqual([0, 255, 255, 255]);
  });

  test('brightness, filter and blur change pixels in the expected direction', async () => {
    const dark = await pixel((await get(srv.server, `/${quad}/-/brightness/-50/`)).body, 150, 75);
    expect(dark[0]).toBeLessThan(200);
    const filtered = await get(srv.server, `/${photo}/-/filter/adaris/100/`);
    expect(filtered.status).toBe(200);
    expect(filtered.body.equals((await get(srv.server, `/${photo}/-/preview/`)).body)).toBe(false);
    const edge = await pixel((await get(srv.server, `/${quad}/-/blur/50/`)).body, 100, 25);
    expect(edge[0]).toBeGreaterThan(40);
    expect(edge[1]).toBeGreaterThan(40);
  });
});

describe('SVG and gif2video', () => {
  test('SVG stays SVG with new geometry; rasterize makes PNG', async () => {
    const id = await put(srv.server, srv.keys, 'r.svg', '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"><rect width="40" height="20" fill="#ff0000"/></svg>');
    const svg = await get(srv.server, `/${id}/-/resize/100x/`);
    expect(svg.headers.get('content-type')).toBe('image/svg+xml');
    expect(svg.headers.get('content-security-policy')).toContain('sandbox');
    expect(svg.text).toMatch(/width="100"/);
    const png = await get(srv.server, `/${id}/-/rasterize/-/format/png/`);
    expect(await dims(png.body)).toEqual([40, 20, 'png']);
    expect(await pixel(png.body, 20, 10)).toEqual(RED);
  });

  test('gif2video produces MP4 and WebM', async () => {
    const id = await putFile(srv.server, srv.keys, await fx.animatedGif(), 'anim.gif');
    const mp4 = await get(srv.server, `/${id}/gif2video/`);
    expect(mp4.status, mp4.text).toBe(200);
    expect(mp4.headers.get('content-type')).toBe('video/mp4');
    expect(mp4.body.toString('latin1', 4, 8)).toBe('ftyp');
    const webm = await get(srv.server, `/${id}/gif2video/-/format/webm/`);
    expect(webm.headers.get('content-type')).toBe('video/webm');
    expect(webm.body.subarray(0, 4).toString('hex')).toBe('1a45dfa3');
  }, 60_000);
});

describe('delivery rules', () => {
  test('-/json/ answers image info with the uuid, CORS and a cache lifetime', async () => {
    const r = await get(srv.server, `/${photo}/-/json/`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/json');
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    expect(r.headers.get('cache-control')).toMatch(/max-age=\d+/);
    expect(JSON.parse(r.text)).toMatchObject({ id: photo, width: 200, height: 100, format: 'JPEG', color_mode: 'RGB', sequence: false });
  });

  test('Content-Disposition: inline with the output extension, URL filename, inline/no', async () => {
    const r = await get(srv.server, `/${quad}/-/format/webp/`);
    expect(r.headers.get('content-disposition')).toBe('inline; filename="quad.webp"');
    expect((await get(srv.server, `/${quad}/-/preview/my%20pic.png`)).headers.get('content-disposition')).toBe('inline; filename="my pic.png"');
    expect((await get(srv.server, `/${quad}/-/preview/-/inline/no/`)).headers.get('content-disposition')).toBe('attachment; filename="quad.png"');
    expect((await get(srv.server, `/${quad}/-/preview/-/inline/yes/`)).headers.get('content-disposition')).toBe('inline; filename="quad.png"');
  });

  test('@clib tags are ignored; ETag is strong and If-None-Match gives 304; HEAD has no body', async () => {
    const a = await get(srv.server, `/${quad}/-/resize/60x/`);
    const b = await get(srv.server, `/${quad}/-/resize/60x/-/@clib/blocks/1.2.3/uc-img/`);
    expect(a.headers.get('etag')).toMatch(/^"[0-9a-f]{40}"$/);
    expect(b.headers.get('etag')).toBe(a.headers.get('etag'));
    expect(b.body.equals(a.body)).toBe(true);
    const nm = await get(srv.server, `/${quad}/-/resize/60x/`, { 'if-none-match': a.headers.get('etag')! });
    expect(nm.status).toBe(304);
    expect(nm.body.length).toBe(0);
    const other = await get(srv.server, `/${quad}/-/resize/60x/`, { 'if-none-match': '"0000"' });
    expect(other.status).toBe(200);
    const head = await get(srv.server, `/${quad}/-/resize/60x/`, {}, 'HEAD');
    expect(head.status).toBe(200);
    expect(Number(head.headers.get('content-length'))).toBe(a.body.length);
    expect(head.body.length).toBe(0);
    expect(a.headers.get('access-control-expose-headers')).toContain('X-Image-Width');
  });
});

describe('empty path segments (the Python SDK requests /<uuid>/detect_faces//)', () => {
  test('are ignored in operations and filenames, and leave the ETag and bytes unchanged', async () => {
    const clean = await get(srv.server, `/${quad}/-/preview/100x100/-/format/png/`);
    expect(clean.status).toBe(200);
    for (const path of [`/${quad}/-/preview/100x100//-/format/png/`, `/${quad}//-/preview/100x100/-/format/png//`, `/${quad}/-/preview//100x100/-/format/png/`]) {
      const r = await get(srv.server, path);
      expect(r.status, path).toBe(200);
      expect(r.headers.get('etag'), path).toBe(clean.headers.get('etag'));
      expect(r.body.equals(clean.body), path).toBe(true);
    }
    const named = await get(srv.server, `/${quad}/-/preview/100x100//-/format/png//small.png`);
    expect(named.headers.get('content-disposition')).toBe('inline; filename="small.png"');
    const raw = await get(srv.server, `/${quad}//`);
    expect(raw.status).toBe(200);
    expect(raw.headers.get('content-type')).toBe('image/png');
  });

  test('detect_faces// answers as detect_faces/ does, not "Empty path segment"', async () => {
    const plain = await get(srv.server, `/${quad}/detect_faces/`);
    const doubled = await get(srv.server, `/${quad}/detect_faces//`);
    expect(doubled.text).not.toMatch(/Empty path segment/);
    expect([doubled.status, doubled.text]).toEqual([plain.status, plain.text]);
  });
});

describe('refusals', () => {
  test('operations on a non-image file: 400 HTML page', async () => {
    const id = await put(srv.server, srv.keys, 'notes.txt', 'hello\n');
    for (const path of [`/${id}/-/preview/`, `/${id}/-/json/`]) {
      const r = await get(srv.server, path);
      expect(r.status).toBe(400);
      expect(r.headers.get('content-type')).toBe('text/html; charset=UTF-8');
      expect(r.headers.get('content-security-policy')).toContain('sandbox');
      expect(r.text).toContain('Not supported for files that are not images.');
    }
    expect((await get(srv.server, `/${id}/`)).status).toBe(200);
  });

  test('unknown operations and bad parameters name the operation', async () => {
    const unknown = await get(srv.server, `/${quad}/-/sepia/`);
    expect(unknown.status).toBe(400);
    expect(unknown.text).toContain('sepia');
    const bad = await get(srv.server, `/${quad}/-/resize/abc/`);
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('resize');
    const notATag = await get(srv.server, `/${quad}/-/crop/unicorn/`);
    expect(notATag.status).toBe(400);
    expect(notATag.text).toContain('crop');
    const tooBig = await get(srv.server, `/${quad}/-/resize/4000x/`);
    expect(tooBig.status).toBe(400);
    expect(tooBig.text).toMatch(/3000x3000/);
  });

  test('decompression bomb: a 144 Mpx PNG of a few KB is not an image and is never decoded', async () => {
    const bomb = await sharp({ create: { width: 12000, height: 12000, channels: 3, background: '#ff0000' } }).png({ compressionLevel: 9 }).toBuffer();
    const id = await put(srv.server, srv.keys, 'bomb.png', bomb);
    const r = await get(srv.server, `/${id}/-/preview/`);
    expect(r.status).toBe(400);
    expect(r.text).toContain('Not supported for files that are not images.');
    const bmp = await putFile(srv.server, srv.keys, fx.bmpBomb(), 'bomb.bmp');
    expect((await get(srv.server, `/${bmp}/-/preview/`)).status).toBe(400);
    expect((await get(srv.server, `/${quad}/-/preview/`)).status).toBe(200);
  }, 60_000);

  test('hostile SVG: no external fetch, no script in the output', async () => {
    const http = await import('node:http');
    let hits = 0;
    const trap = http.createServer((_req, res) => { hits++; res.end(); });
    await new Promise<void>((r) => trap.listen(0, '127.0.0.1', r));
    const port = (trap.address() as { port: number }).port;
    try {
      const id = await put(srv.server, srv.keys, 'evil.svg', `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="50" height="50">
        <rect width="50" height="50" fill="#fff"/><image href="http://127.0.0.1:${port}/a.png" width="50" height="50"/>
        <image xlink:href="file:///etc/passwd" width="50" height="50"/><rect width="9" height="9" style="fill:url(http://127.0.0.1:${port}/p.svg#x)" onload="alert(1)"/>
        <script>alert(1)</script></svg>`);
      const png = await get(srv.server, `/${id}/-/rasterize/-/format/png/`);
      expect(png.status).toBe(200);
      expect(await pixel(png.body, 25, 25)).toEqual(WHITE);
      const svg = await get(srv.server, `/${id}/-/resize/25x/`);
      for (const bad of ['<script', 'onload', `127.0.0.1:${port}`, 'file://']) expect(svg.text).not.toContain(bad);
      expect(hits).toBe(0);
    } finally {
      trap.close();
    }
  });
});

/**
 * The hostile-file catalogue: decompression bombs of each image format (real ones just under the
 * 75 Mpx processing limit that compress to almost nothing, and headers declaring far more than the
 * limit), huge RLE TGA and PCX, and hostile SVGs (entity expansion, scripts under namespace
 * prefixes, SMIL javascript:, external and local references, deep nesting).
 */
import zlib from 'node:zlib';
import sharp from 'sharp';

export interface HostileFile {
  name: string;
  type: string;
  data: Buffer;
  /** What it attacks, for the report. */
  attack: string;
}

function crc32(buf: Buffer): number {
  let c = ~0;
  for (const byte of buf) {
    c ^= byte;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}

function pngChunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

/** An 8-bit greyscale PNG of w x h zero pixels: tens of KB on disk, w*h bytes (and more) decoded. */
export function pngBomb(w: number, h: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 0; // greyscale
  // Every row: filter byte 0 then w zero pixels, so the raw stream is all zeros.
  const idat = zlib.deflateSync(Buffer.alloc((w + 1) * h), { level: 9 });
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, pngChunk('IHDR', ihdr), pngChunk('IDAT', idat), pngChunk('IEND', Buffer.alloc(0))]);
}

/** Offsets of the first SOF0/SOF1/SOF2 segment's height and width in a JPEG. */
function jpegSofOffset(jpeg: Buffer): number {
  for (let i = 2; i < jpeg.length - 9; ) {
    if (jpeg[i] !== 0xff) throw new Error('not a JPEG segment');
    const marker = jpeg[i + 1]!;
    if (marker >= 0xc0 && marker <= 0xc2) return i + 5;
    i += 2 + jpeg.readUInt16BE(i + 2);
  }
  throw new Error('no SOF marker');
}

/** A small real file of each format whose header is rewritten to declare `w` x `h`. */
export async function headerBombs(w: number, h: number): Promise<HostileFile[]> {
  const small = sharp({ create: { width: 16, height: 16, channels: 3, background: { r: 200, g: 10, b: 10 } } });
  const jpeg = Buffer.from(await small.clone().jpeg().toBuffer());
  const sof = jpegSofOffset(jpeg);
  jpeg.writeUInt16BE(Math.min(h, 65535), sof);
  jpeg.writeUInt16BE(Math.min(w, 65535), sof + 2);

  const gif = Buffer.from(await small.clone().gif().toBuffer());
  gif.writeUInt16LE(Math.min(w, 65535), 6);
  gif.writeUInt16LE(Math.min(h, 65535), 8);
  const descriptor = gif.indexOf(0x2c, 13 + (gif[10]! & 0x80 ? 3 * 2 ** ((gif[10]! & 7) + 1) : 0));
  gif.writeUInt16LE(Math.min(w, 65535), descriptor + 5);
  gif.writeUInt16LE(Math.min(h, 65535), descriptor + 7);

  const webp = Buffer.from(await small.clone().webp({ quality: 50 }).toBuffer());
  const vp8 = webp.indexOf('VP8 ', 12, 'latin1');
  // Frame tag (3 bytes) and start code (3 bytes) precede the 14-bit dimensions.
  webp.writeUInt16LE(Math.min(w, 16383), vp8 + 8 + 6);
  webp.writeUInt16LE(Math.min(h, 16383), vp8 + 8 + 8);

  const tiff = Buffer.from(await small.clone().tiff({ compression: 'none' }).toBuffer());
  const ifd = tiff.readUInt32LE(4);
  for (let i = 0, n = tiff.readUInt16LE(ifd); i < n; i++) {
    const entry = ifd + 2 + i * 12;
    const tag = tiff.readUInt16LE(entry);
    if (tag !== 256 && tag !== 257) continue;
    // Rewrite as LONG so values above 65535 fit.
    tiff.writeUInt16LE(4, entry + 2);
    tiff.writeUInt32LE(1, entry + 4);
    tiff.writeUInt32LE(tag === 256 ? w : h, entry + 8);
  }

  const bmp = Buffer.alloc(54 + 4 * 3);
  bmp.write('BM', 0, 'latin1');
  bmp.writeUInt32LE(bmp.length, 2);
  bmp.writeUInt32LE(54, 10);
  bmp.writeUInt32LE(40, 14);
  bmp.writeInt32LE(w, 18);
  bmp.writeInt32LE(h, 22);
  bmp.writeUInt16LE(1, 26);
  bmp.writeUInt16LE(24, 28);

  const attack = `header declares ${w}x${h}`;
  return [
    { name: `header-${w}.png`, type: 'image/png', data: pngHeaderOnly(w, h), attack },
    { name: `header-${w}.jpg`, type: 'image/jpeg', data: jpeg, attack },
    { name: `header-${w}.gif`, type: 'image/gif', data: gif, attack },
    { name: `header-${w}.webp`, type: 'image/webp', data: webp, attack },
    { name: `header-${w}.tiff`, type: 'image/tiff', data: tiff, attack },
    { name: `header-${w}.bmp`, type: 'image/bmp', data: bmp, attack },
  ];
}

/** A PNG whose IHDR declares w x h over a tiny IDAT. */
function pngHeaderOnly(w: number, h: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr[8] = 8;
  ihdr[9] = 2;
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, pngChunk('IHDR', ihdr), pngChunk('IDAT', zlib.deflateSync(Buffer.alloc(1000))), pngChunk('IEND', Buffer.alloc(0))]);
}

/** Real images just under the 75 Mpx limit that compress to little: every decode is the full size. */
export async function realBombs(side: number): Promise<HostileFile[]> {
  const solid = () => sharp({ create: { width: side, height: side, channels: 3, background: { r: 0, g: 0, b: 0 } } });
  const attack = `${side}x${side} (${Math.round((side * side) / 1e6)} Mpx) of one colour`;
  return [
    { name: `bomb-${side}.png`, type: 'image/png', data: pngBomb(side, side), attack },
    { name: `bomb-${side}.jpg`, type: 'image/jpeg', data: await solid().jpeg({ quality: 10 }).toBuffer(), attack },
    { name: `bomb-${side}.tiff`, type: 'image/tiff', data: await solid().tiff({ compression: 'deflate' }).toBuffer(), attack },
  ];
}

/** Run-length TGA (type 10, 24-bit) of w x h one-colour pixels; `keepBytes` cuts it short. */
export function rleTga(w: number, h: number, keepBytes?: number): Buffer {
  const head = Buffer.alloc(18);
  head[2] = 10;
  head.writeUInt16LE(w, 12);
  head.writeUInt16LE(h, 14);
  head[16] = 24;
  head[17] = 0x20;
  const packets = Math.ceil((w * h) / 128);
  const body = Buffer.alloc(packets * 4);
  for (let i = 0; i < packets; i++) body.set([0xff, 10, 20, 200], i * 4);
  const full = Buffer.concat([head, body]);
  return keepBytes === undefined ? full : full.subarray(0, keepBytes);
}

/** Run-length 24-bit PCX (3 planes) of w x h one-colour pixels; `keepBytes` cuts it short. */
export function rlePcx(w: number, h: number, keepBytes?: number): Buffer {
  const stride = w + (w % 2);
  const header = Buffer.alloc(128);
  header[0] = 0x0a; header[1] = 5; header[2] = 1; header[3] = 8;
  header.writeUInt16LE(w - 1, 8);
  header.writeUInt16LE(h - 1, 10);
  header[65] = 3;
  header.writeUInt16LE(stride, 66);
  header.writeUInt16LE(1, 68);
  const line: number[] = [];
  for (const v of [200, 20, 10]) {
    for (let left = stride; left > 0; left -= 63) line.push(0xc0 | Math.min(63, left), v);
  }
  const row = Buffer.from(line);
  const rows = keepBytes === undefined ? h : Math.max(1, Math.ceil((keepBytes - 128) / row.length));
  const full = Buffer.concat([header, ...Array.from({ length: rows }, () => row)]);
  return keepBytes === undefined ? full : full.subarray(0, keepBytes);
}

export function rleFiles(): HostileFile[] {
  return [
    { name: 'rle-8000.tga', type: 'image/x-tga', data: rleTga(8000, 8000), attack: 'RLE TGA 8000x8000 in 2 MB' },
    { name: 'rle-8000-cut.tga', type: 'image/x-tga', data: rleTga(8000, 8000, 3000), attack: 'RLE TGA declaring 8000x8000 in 3 KB' },
    { name: 'rle-8000.pcx', type: 'image/x-pcx', data: rlePcx(8000, 8000), attack: 'RLE PCX 8000x8000 in 6 MB' },
    { name: 'rle-8000-cut.pcx', type: 'image/x-pcx', data: rlePcx(8000, 8000, 3000), attack: 'RLE PCX declaring 8000x8000 in 3 KB' },
    { name: 'rle-65535.tga', type: 'image/x-tga', data: rleTga(65535, 65535, 4000), attack: 'RLE TGA declaring 65535x65535' },
  ];
}

/** Hostile SVGs; `probeUrl` is a local listener that must never be fetched. */
export function hostileSvgs(probeUrl: string): HostileFile[] {
  const svg = (name: string, attack: string, text: string): HostileFile => ({ name, type: 'image/svg+xml', data: Buffer.from(text), attack });
  const NS = 'xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"';
  const laughs = ['<!ENTITY l0 "lol">', ...Array.from({ length: 9 }, (_, i) => `<!ENTITY l${i + 1} "${`&l${i};`.repeat(10)}">`)].join('');
  return [
    svg('laughs.svg', 'billion laughs (entity expansion)', `<?xml version="1.0"?><!DOCTYPE svg [${laughs}]><svg ${NS} width="100" height="100"><text y="20">&l9;</text></svg>`),
    svg('xxe.svg', 'external entity to /etc/passwd', `<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]><svg ${NS} width="100" height="100"><text y="20">&x;</text></svg>`),
    svg('script.svg', '<script> and event handlers', `<svg ${NS} width="100" height="100" onload="alert(1)"><script>alert(1)</script><rect width="100" height="100" onclick="alert(2)"/></svg>`),
    svg('xhtml-script.svg', '<h:script> with an XHTML prefix', `<svg ${NS} xmlns:h="http://www.w3.org/1999/xhtml" width="100" height="100"><h:script>alert(1)</h:script><rect width="100" height="100"/></svg>`),
    svg('svg-prefix-script.svg', '<svg:script> with an SVG prefix', `<svg:svg xmlns:svg="http://www.w3.org/2000/svg" width="100" height="100"><svg:script>alert(1)</svg:script><svg:rect width="100" height="100"/></svg:svg>`),
    svg('smil-href.svg', 'SMIL animate setting href to javascript:', `<svg ${NS} width="100" height="100"><a><animate attributeName="href" values="javascript:alert(1)"/><text y="20">click</text></a><set attributeName="xlink:href" to="javascript:alert(2)"/></svg>`),
    svg('external-refs.svg', 'image, use, CSS and XInclude references to a local listener and files', `<svg ${NS} xmlns:xi="http://www.w3.org/2001/XInclude" width="100" height="100"><style>@import url(${probeUrl}/css); rect { fill: url(${probeUrl}/fill#x) }</style><image href="${probeUrl}/img.png" width="50" height="50"/><image xlink:href="file:///etc/passwd" width="50" height="50"/><use href="${probeUrl}/use.svg#a"/><xi:include href="${probeUrl}/xi"/><rect width="10" height="10" style="filter:url(${probeUrl}/f)"/></svg>`),
    svg('foreign.svg', 'foreignObject with an iframe', `<svg ${NS} width="100" height="100"><foreignObject width="100" height="100"><iframe xmlns="http://www.w3.org/1999/xhtml" src="${probeUrl}/frame"/></foreignObject></svg>`),
    svg('deep.svg', '20,000 nested groups', `<svg ${NS} width="100" height="100">${'<g>'.repeat(20_000)}<rect width="10" height="10"/>${'</g>'.repeat(20_000)}</svg>`),
    svg('huge-dims.svg', 'declares 100000x100000', `<svg ${NS} width="100000" height="100000"><rect width="10" height="10"/></svg>`),
    svg('many-elements.svg', '200,000 elements', `<svg ${NS} width="1000" height="1000">${'<circle cx="5" cy="5" r="5"/>'.repeat(200_000)}</svg>`),
    svg('filter-bomb.svg', 'huge blur filter on a large canvas', `<svg ${NS} width="2900" height="2900"><filter id="b"><feGaussianBlur stdDeviation="1000"/><feMorphology radius="1000"/></filter><rect width="2900" height="2900" filter="url(#b)"/></svg>`),
  ];
}

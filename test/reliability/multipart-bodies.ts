/**
 * Hand-built multipart/form-data bodies for the /base/ fuzzer: odd boundaries (empty, quoted,
 * spaces, up to 400 characters), odd part headers (no name, NUL, huge, RFC 5987 names), odd field
 * values, and structural damage (missing CRLF, no closing delimiter, a cut at a random byte).
 */
import type { Random } from './random.js';
import { HOSTILE_STRINGS, pct } from './bodies.js';

const BCHARS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'()+_,-./:=?";

export interface MultipartCase {
  contentType: string;
  body: Buffer;
  /** What was done to it, for the report of a failing case. */
  label: string;
}

export function boundaryOf(rnd: Random, maxLength: number): string {
  const r = rnd.next();
  if (r < 0.05) return '';
  if (r < 0.1) return ' a b ';
  if (r < 0.15) return 'a"b';
  const length = rnd.chance(0.2) ? rnd.int(1, maxLength) : rnd.int(1, 70);
  return Array.from({ length }, () => BCHARS[rnd.int(0, BCHARS.length - 1)]).join('');
}

function headerOfContentType(rnd: Random, boundary: string): string {
  return rnd.pick([
    `multipart/form-data; boundary=${boundary}`,
    `multipart/form-data; boundary="${boundary}"`,
    `multipart/form-data;boundary=${boundary}; charset=utf-8`,
    `MULTIPART/FORM-DATA; BOUNDARY=${boundary}`,
    `multipart/form-data; boundary=${boundary}; boundary=other`,
    `multipart/mixed; boundary=${boundary}`,
    'multipart/form-data',
    'multipart/form-data; boundary=',
  ]);
}

interface Part {
  headers: string[];
  body: Buffer;
}

function field(name: string, value: string | Buffer): Part {
  return { headers: [`Content-Disposition: form-data; name="${name}"`], body: Buffer.isBuffer(value) ? value : Buffer.from(value, 'utf8') };
}

function filePart(rnd: Random, name: string): Part {
  const filename = rnd.chance(0.6) ? 'photo.png' : rnd.pick(HOSTILE_STRINGS).slice(0, rnd.pick([10, 300, 5000]));
  const disposition = rnd.pick([
    `form-data; name="${name}"; filename="${filename}"`,
    `form-data; name="${name}"; filename*=UTF-8''${pct(filename)}`,
    `form-data; name="${name}"; filename=${filename}`,
    `form-data; filename="${filename}"`,
    'form-data',
    `attachment; name="${name}"; filename="a"`,
  ]);
  const type = rnd.pick(['application/octet-stream', 'image/png', 'text/plain', '', 'x/\u0000', 'image/svg+xml', 'a'.repeat(5000)]);
  const size = rnd.pick([0, 1, 100, 10_000, 200_000]);
  return { headers: [`Content-Disposition: ${disposition}`, ...(type ? [`Content-Type: ${type}`] : [])], body: rnd.bytes(size) };
}

function oddHeaderPart(rnd: Random): Part & { label: string } {
  const i = rnd.int(0, ODD_PARTS.length - 1);
  return { ...ODD_PARTS[i]!, label: `odd part ${i}` };
}

const ODD_PARTS: Part[] = [
    { headers: [], body: Buffer.from('no headers') },
    { headers: ['Content-Disposition form-data name=x'], body: Buffer.from('no colon') },
    { headers: [`Content-Disposition: form-data; name="${'n'.repeat(10_000)}"`], body: Buffer.from('long name') },
    { headers: ['Content-Disposition: form-data; name="a\u0000b"'], body: Buffer.from('nul name') },
    { headers: [`X-Long: ${'h'.repeat(100_000)}`, 'Content-Disposition: form-data; name="x"'], body: Buffer.from('long header') },
    { headers: Array.from({ length: 500 }, (_, i) => `X-H${i}: v`), body: Buffer.from('many headers') },
    { headers: ['Content-Disposition: form-data; name="metadata[\u0001]"'], body: Buffer.from('v') },
    { headers: ['Content-Disposition: form-data; name="x"', 'Content-Transfer-Encoding: base64'], body: Buffer.from('!!!') },
];

/** A random /base/ body for a project key (or a damaged one). */
export function multipartCase(rnd: Random, pubKey: string, maxBoundary: number): MultipartCase {
  const boundary = boundaryOf(rnd, maxBoundary);
  const labels: string[] = [`boundary ${boundary.length}`];
  const parts: Part[] = [];
  const key = rnd.chance(0.8) ? pubKey : rnd.pick(['', 'demopublickey', `${pubKey}\u0000`, 'x'.repeat(1000), pubKey.toUpperCase()]);
  if (rnd.chance(0.9)) parts.push(field(rnd.pick(['UPLOADCARE_PUB_KEY', 'pub_key', 'SVC_PUB_KEY', 'UPLOADCARE_PUB_KEY']), key));
  const files = rnd.chance(0.1) ? rnd.int(0, 120) : rnd.int(0, 3);
  labels.push(`${files} files`);
  for (let i = 0; i < files; i++) parts.push(filePart(rnd, rnd.chance(0.9) ? `file${i}` : rnd.pick(HOSTILE_STRINGS).slice(0, 100)));
  if (rnd.chance(0.5)) parts.push(field('UPLOADCARE_STORE', rnd.pick(['0', '1', 'auto', 'yes', '', '\u0000', '2'])));
  if (rnd.chance(0.3)) parts.push(field(`metadata[${rnd.pick(['k', '', 'a'.repeat(100), '\u0000', 'ключ', 'a b'])}]`, rnd.pick(HOSTILE_STRINGS)));
  if (rnd.chance(0.2)) parts.push(field(rnd.pick(['signature', 'expire', 'source', 'jsonerrors', 'check_URL_duplicates']), rnd.pick(HOSTILE_STRINGS)));
  if (rnd.chance(0.2)) {
    const odd = oddHeaderPart(rnd);
    labels.push(odd.label);
    parts.push(odd);
  }
  // Shuffle: the JS SDK sends the key after the file.
  for (let i = parts.length - 1; i > 0; i--) {
    const j = rnd.int(0, i);
    [parts[i], parts[j]] = [parts[j]!, parts[i]!];
  }
  const eol = rnd.chance(0.05) ? '\n' : '\r\n';
  const chunks: Buffer[] = [];
  if (rnd.chance(0.1)) chunks.push(Buffer.from(`preamble garbage${eol}`));
  for (const p of parts) {
    chunks.push(Buffer.from(`--${boundary}${eol}${p.headers.map((h) => `${h}${eol}`).join('')}${eol}`), p.body, Buffer.from(eol));
  }
  if (rnd.chance(0.9)) chunks.push(Buffer.from(`--${boundary}--${eol}`));
  else labels.push('no closing delimiter');
  if (rnd.chance(0.05)) chunks.push(Buffer.from('epilogue garbage'));
  let body = Buffer.concat(chunks);
  if (rnd.chance(0.1)) {
    body = body.subarray(0, rnd.int(0, body.length));
    labels.push(`cut at ${body.length}`);
  }
  if (eol === '\n') labels.push('LF only');
  return { contentType: headerOfContentType(rnd, boundary), body, label: labels.join(', ') };
}

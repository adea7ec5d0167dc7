/**
 * Converters reach nothing a document names, and are bounded in memory: documents that link to a
 * loopback listener and to /etc/passwd every way we know (HTML, FODT, ODT, DOCX, RTF, CSV: see
 * ./hostile.ts) go through the real REST conversion API of a real server with real LibreOffice; the
 * listener sees no request, the PDFs hold the documents' own text but neither the listener's answer
 * (its text, or the picture it serves for image URLs) nor /etc/passwd. A zip-bomb DOCX fails at the memory bound with a clear reason. One server, three
 * conversions at once: the bomb is submitted first and grows while the others convert; the memory
 * bound is 512 MiB here so it reaches it sooner.
 */
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useServer } from '../helpers/use-server.js';
import { hostileDocuments, zipBombDocx } from './hostile.js';
import { pdfImageSizes, pdfText, waitForJob } from './helpers.js';

const SECRET = 'LISTENER-SECRET-7f3a';
const requests: string[] = [];
/** What the listener answers for image URLs: a size no placeholder has. */
const PICTURE = { width: 17, height: 13 };
let picture: Buffer = Buffer.alloc(0);
const listener = http.createServer((req, res) => {
  requests.push(`${req.method} ${req.url}`);
  if (req.url?.endsWith('.png')) {
    res.setHeader('content-type', 'image/png');
    res.end(picture);
    return;
  }
  res.setHeader('content-type', req.url?.includes('filterxml') ? 'text/xml' : 'text/html');
  res.end(req.url?.includes('filterxml') ? `<a>${SECRET}</a>` : `<html><body><p>${SECRET}</p></body></html>`);
});
let base = '';

beforeAll(async () => {
  picture = await sharp({ create: { ...PICTURE, channels: 3, background: '#c00' } }).png().toBuffer();
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(listener.address() as { port: number }).port}`;
});
afterAll(() => listener.close());

const MEMORY_BOUND = 512 * 1024 ** 2;
const s = useServer({ env: { STOWAGE_CONVERT_DOCUMENT_CONCURRENCY: '3', STOWAGE_TOOL_MEMORY_BYTES: String(MEMORY_BOUND) } });

const convert = (paths: string[]) => s.call('POST', '/convert/document/', { body: JSON.stringify({ paths }) });
const cdnBytes = async (uuid: string): Promise<Buffer> => {
  const r = await fetch(`${s.cdn}/${uuid}/`);
  expect(r.status).toBe(200);
  return Buffer.from(await r.arrayBuffer());
};
const passwdLine = fs.readFileSync('/etc/passwd', 'utf8').split('\n')[0]!;
let bombToken = 0;

beforeAll(async () => {
  // About 1 MB that expands to 10 million paragraphs.
  const bomb = await zipBombDocx(10_000_000);
  expect(bomb.length).toBeLessThan(1.5 * 1024 ** 2);
  const uuid = await s.uploadFile('bomb.docx', bomb);
  const r = await convert([`${uuid}/document/-/format/pdf/`]);
  expect(r.json.problems).toEqual({});
  bombToken = r.json.result[0].token;
}, 120_000);

describe('converter isolation', () => {
  it('hostile documents convert, and nothing they link to is fetched or read', { timeout: 600_000 }, async () => {
    const docs = await hostileDocuments(base);
    const uuids = await Promise.all(docs.map((d) => s.uploadFile(d.name, d.data)));
    const r = await convert(uuids.map((u) => `${u}/document/-/format/pdf/`));
    expect(r.status, r.text).toBe(200);
    expect(r.json.problems).toEqual({});
    const done = await Promise.all(r.json.result.map((x: { token: number }) => waitForJob(s.call, 'document', x.token)));
    expect(requests).toEqual([]);
    for (const [i, d] of docs.entries()) {
      expect(done[i], `${d.name}: ${JSON.stringify(done[i])}`).toMatchObject({ status: 'finished', error: null });
      const text = pdfText(await cdnBytes(done[i]!.result.uuid));
      expect(text, d.name).toContain(d.marker);
      expect(text, d.name).not.toContain(SECRET);
      expect(text, d.name).not.toContain(passwdLine);
      expect(text, d.name).not.toMatch(/root:x?:0:0/);
      // The listener's 17x13 picture is nowhere (LibreOffice's placeholders for missing pictures are).
      expect(pdfImageSizes(await cdnBytes(done[i]!.result.uuid)), d.name).not.toContain(`${PICTURE.width}x${PICTURE.height}`);
    }
  });

  it('a zip-bomb DOCX fails at the memory bound with a clear reason, and leaves no process behind', { timeout: 300_000 }, async () => {
    const done = await waitForJob(s.call, 'document', bombToken);
    expect(done).toMatchObject({ status: 'failed', error: 'LibreOffice was stopped: it needed more than its memory bound of 512 MiB.' });
    const ps = execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' });
    expect(ps.split('\n').filter((l) => l.includes(path.join(s.server.dataDir, 'convert-work')))).toEqual([]);
  });
});

/** Inputs and polling for the conversion tests: DOCX and PDF made here, videos made by ffmpeg. */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import yazl from 'yazl';
import { unzip } from '../helpers/archives.js';
import { expect } from 'vitest';
import type { restClient } from '../helpers/rest.js';

/** A PDF of `pages` pages of `w` x `h` points, each with its number written on it. */
export function makePdf(pages: number, w: number, h: number): Buffer {
  const objects: string[] = [];
  const kids = Array.from({ length: pages }, (_, i) => `${4 + i * 2} 0 R`).join(' ');
  objects.push('<< /Type /Catalog /Pages 2 0 R >>');
  objects.push(`<< /Type /Pages /Kids [${kids}] /Count ${pages} >>`);
  objects.push('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>');
  for (let i = 0; i < pages; i++) {
    const stream = `BT /F1 24 Tf 20 20 Td (Page ${i + 1}) Tj ET`;
    objects.push(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${w} ${h}] /Resources << /Font << /F1 3 0 R >> >> /Contents ${5 + i * 2} 0 R >>`);
    objects.push(`<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`);
  }
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((o, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

/** A Word document of `pages` US-letter pages (page breaks between paragraphs). */
export async function makeDocx(pages: number): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  zip.addBuffer(Buffer.from('<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>'), '[Content_Types].xml');
  zip.addBuffer(Buffer.from('<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>'), '_rels/.rels');
  const body = Array.from({ length: pages }, (_, i) => {
    const br = i > 0 ? '<w:r><w:br w:type="page"/></w:r>' : '';
    return `<w:p>${br}<w:r><w:t>Page ${i + 1} of the test document</w:t></w:r></w:p>`;
  }).join('');
  const doc = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>${body}<w:sectPr><w:pgSz w:w="12240" w:h="15840"/><w:pgMar w:top="1440" w:right="1440" w:bottom="1440" w:left="1440" w:header="720" w:footer="720" w:gutter="0"/></w:sectPr></w:body></w:document>`;
  zip.addBuffer(Buffer.from(doc), 'word/document.xml');
  zip.end();
  const chunks: Buffer[] = [];
  for await (const c of zip.outputStream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** A test-pattern video made by ffmpeg (`args`: extra output options). */
export function makeVideo(name: string, seconds: number, size: string, args: string[], audio = true): Buffer {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-test-video-'));
  try {
    const out = path.join(dir, name);
    const inputs = ['-f', 'lavfi', '-i', `testsrc=size=${size}:rate=25:duration=${seconds}`, ...(audio ? ['-f', 'lavfi', '-i', `sine=frequency=440:duration=${seconds}`] : [])];
    execFileSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', ...inputs, ...args, '-y', out]);
    return fs.readFileSync(out);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Polls a conversion's status until it is no longer pending or processing. */
export async function waitForJob(call: ReturnType<typeof restClient>, kind: 'document' | 'video', token: number, timeoutMs = 240_000): Promise<{ status: string; error: string | null; result: { uuid: string; thumbnails_group_uuid?: string } }> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const r = await call('GET', `/convert/${kind}/status/${token}/`);
    expect(r.status, r.text).toBe(200);
    if (r.json.status !== 'pending' && r.json.status !== 'processing') return r.json;
    if (Date.now() > until) throw new Error(`conversion ${token} still ${r.json.status}`);
    await new Promise((res) => setTimeout(res, 300));
  }
}

/** Writes `data` to a temporary file and returns its pdfinfo page count. */
export function pdfPages(data: Buffer): number {
  const file = path.join(os.tmpdir(), `stowage-test-${process.pid}-${Date.now()}.pdf`);
  fs.writeFileSync(file, data);
  try {
    return Number(/^Pages:\s+(\d+)/m.exec(execFileSync('pdfinfo', [file]).toString())?.[1]);
  } finally {
    fs.rmSync(file, { force: true });
  }
}

/** The text of a PDF (pdftotext). */
export function pdfText(data: Buffer): string {
  const file = path.join(os.tmpdir(), `stowage-test-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}.pdf`);
  fs.writeFileSync(file, data);
  try {
    return execFileSync('pdftotext', ['-enc', 'UTF-8', file, '-']).toString();
  } finally {
    fs.rmSync(file, { force: true });
  }
}

/** The pixel size of every image a PDF holds (pdfimages -list), as `WxH`. */
export function pdfImageSizes(data: Buffer): string[] {
  const file = path.join(os.tmpdir(), `stowage-test-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}.pdf`);
  fs.writeFileSync(file, data);
  try {
    // Two header lines, then one line per image: page num type width height …
    const lines = execFileSync('pdfimages', ['-list', file]).toString().trim().split('\n').slice(2);
    return lines.map((l) => l.trim().split(/\s+/)).map((f) => `${f[3]}x${f[4]}`);
  } finally {
    fs.rmSync(file, { force: true });
  }
}

/** Every entry of a zip (an OOXML or ODF file) as UTF-8 text, by name. */
export async function unzipText(data: Buffer): Promise<Record<string, string>> {
  return Object.fromEntries((await unzip(data)).map(([name, bytes]) => [name, bytes.toString('utf8')]));
}

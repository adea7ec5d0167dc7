/**
 * Document conversion over real HTTP with real LibreOffice and poppler: DOCX and PDF inputs made by
 * the test, an ODT made by the server itself, outputs checked by their bytes (pdfinfo page counts,
 * PNG/JPEG sizes through sharp), page groups, format info, and every refusal. LibreOffice starts
 * slowly, so one server converts everything, several jobs at once.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { useServer } from '../helpers/use-server.js';
import { png } from '../groups/helpers.js';
import { makeDocx, makePdf, pdfPages, pdfText, unzipText, waitForJob } from './helpers.js';

const s = useServer({ env: { STOWAGE_CONVERT_DOCUMENT_CONCURRENCY: '2' } });
let docx: string;
let pdf: string;

beforeAll(async () => {
  docx = await s.uploadFile('report.docx', await makeDocx(3));
  pdf = await s.uploadFile('slides.pdf', makePdf(2, 200, 100));
}, 180_000);

const convert = (body: unknown) => s.call('POST', '/convert/document/', { body: JSON.stringify(body) });
const cdnBytes = async (uuid: string) => {
  const r = await fetch(`${s.cdn}/${uuid}/`);
  expect(r.status).toBe(200);
  return Buffer.from(await r.arrayBuffer());
};
const fileInfo = async (uuid: string) => (await s.call('GET', `/files/${uuid}/`)).json;

describe('document conversion', () => {
  it('converts DOCX to PDF, ODT and a JPEG page, PDF pages to PNG, and ODT back to a PNG page', { timeout: 600_000 }, async () => {
    const paths = [`${docx}/document/-/format/pdf/`, `${s.cdn}/${docx}/document/-/format/odt/`, `${docx}/document/-/format/jpg/`, `${pdf}/document/-/format/png/-/page/2/-/dpi/72/`];
    const r = await convert({ paths, store: true });
    expect(r.status, r.text).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/json');
    expect(r.json.problems).toEqual({});
    expect(r.json.result.map((x: { original_source: string }) => x.original_source)).toEqual(paths);
    for (const x of r.json.result) {
      expect(Number.isInteger(x.token)).toBe(true);
      expect(x.uuid).toMatch(/^[0-9a-f-]{36}$/);
    }
    const [toPdf, toOdt, toJpg, toPng] = r.json.result;
    const done = await Promise.all(r.json.result.map((x: { token: number }) => waitForJob(s.call, 'document', x.token)));
    for (const d of done) expect(d, JSON.stringify(d)).toMatchObject({ status: 'finished', error: null });
    expect(done.map((d) => d.result.uuid)).toEqual(r.json.result.map((x: { uuid: string }) => x.uuid));

    const pdfOut = await cdnBytes(toPdf.uuid);
    expect(pdfOut.subarray(0, 5).toString()).toBe('%PDF-');
    expect(pdfPages(pdfOut)).toBe(3);
    const pdfInfo = await fileInfo(toPdf.uuid);
    expect(pdfInfo).toMatchObject({ is_ready: true, original_filename: 'report.pdf', mime_type: 'application/pdf', content_info: { mime: { mime: 'application/pdf' } } });
    expect(pdfInfo.datetime_stored).not.toBeNull();

    const odtInfo = await fileInfo(toOdt.uuid);
    expect(odtInfo.content_info.mime.mime).toBe('application/vnd.oasis.opendocument.text');
    expect(odtInfo.original_filename).toBe('report.odt');

    // US letter at the default 150 dpi.
    const jpg = await sharp(await cdnBytes(toJpg.uuid)).metadata();
    expect([jpg.format, jpg.width, jpg.height]).toEqual(['jpeg', 1275, 1650]);
    // 200 x 100 pt at 72 dpi.
    const page2 = await sharp(await cdnBytes(toPng.uuid)).metadata();
    expect([page2.format, page2.width, page2.height]).toEqual(['png', 200, 100]);

    // The server's own ODT is a real document: its first page renders.
    const back = await convert({ paths: [`${toOdt.uuid}/document/-/format/png/-/dpi/30/`] });
    expect(back.json.problems).toEqual({});
    expect(await waitForJob(s.call, 'document', back.json.result[0].token)).toMatchObject({ status: 'finished' });
    const odtPage = await sharp(await cdnBytes(back.json.result[0].uuid)).metadata();
    expect([odtPage.format, odtPage.width, odtPage.height]).toEqual(['png', 255, 330]);
  });

  it('save_in_group makes a group of every page and lists it in the format info', { timeout: 300_000 }, async () => {
    const r = await convert({ paths: [`${pdf}/document/-/format/png/-/dpi/36/`], save_in_group: 'true' });
    expect(r.json.problems).toEqual({});
    const status = await waitForJob(s.call, 'document', r.json.result[0].token);
    expect(status.status).toBe('finished');
    const info = await s.call('GET', `/convert/document/${pdf}/`);
    expect(info.status, info.text).toBe(200);
    expect(info.json.error).toBeNull();
    expect(info.json.format.name).toBe('pdf');
    expect(info.json.format.conversion_formats.map((f: { name: string }) => f.name).sort()).toEqual(['enhanced.jpg', 'jpg', 'png', 'txt']);
    const groupId = info.json.format.converted_groups.png as string;
    expect(groupId).toMatch(/~2$/);
    expect(info.json.converted_groups).toEqual(info.json.format.converted_groups);
    const group = await s.call('GET', `/groups/${groupId}/`);
    expect(group.status, group.text).toBe(200);
    const files = group.json.files as Array<{ uuid: string }>;
    expect(files.length).toBe(2);
    expect(files[0]!.uuid).toBe(status.result.uuid);
    for (const f of files) {
      const m = await sharp(await cdnBytes(f.uuid)).metadata();
      expect([m.format, m.width, m.height]).toEqual(['png', 100, 50]);
    }
    const docInfo = await s.call('GET', `/convert/document/${docx}/`);
    expect(docInfo.json.format.name).toBe('docx');
    expect(docInfo.json.format.conversion_formats.map((f: { name: string }) => f.name)).toContain('pdf');
  });

  it('answers each bad path in problems and converts the good ones', async () => {
    const image = await s.uploadFile('photo.png', await png(20, 20), { type: 'image/png' });
    const missing = '3b1a7c5e-0000-4000-8000-000000000000';
    const good = `${pdf}/document/-/format/txt/`;
    const bad = {
      'not-a-uuid/document/-/format/pdf/': 'Bad path "not-a-uuid/document/-/format/pdf/". Use UUID or CDN URL',
      [`${missing}/document/-/format/pdf/`]: `Bad path "${missing}/document/-/format/pdf/". Use UUID or CDN URL`,
      [`${docx}/document/-/format/xyz/`]: 'unsupported target format "xyz"',
      [`${image}/document/-/format/pdf/`]: 'not a document',
      [`${pdf}/document/-/format/docx/`]: "a pdf document can't be converted to docx",
      [`${docx}/document/-/format/pdf/-/page/2/`]: 'apply only to the jpg',
      [`${docx}/document/`]: 'target format is required',
    };
    const r = await convert({ paths: [...Object.keys(bad), good] });
    expect(r.status, r.text).toBe(200);
    expect(Object.keys(r.json.problems).sort()).toEqual(Object.keys(bad).sort());
    for (const [p, text] of Object.entries(bad)) expect(r.json.problems[p]).toContain(text);
    expect(r.json.result.map((x: { original_source: string }) => x.original_source)).toEqual([good]);
    const done = await waitForJob(s.call, 'document', r.json.result[0].token);
    expect(done.status).toBe('finished');
    expect((await cdnBytes(done.result.uuid)).toString()).toContain('Page 2');
  });

  it('refuses bodies without paths, and unknown tokens', { timeout: 180_000 }, async () => {
    expect((await convert({})).json).toEqual({ detail: '“paths” parameter is required.' });
    expect((await convert({})).status).toBe(400);
    expect((await convert(['x'])).json).toEqual({ detail: 'Expected JSON object.' });
    expect((await convert({ paths: 'x' })).status).toBe(400);
    expect((await convert({ paths: [`${pdf}/document/-/format/png/`], store: 'maybe' })).status).toBe(400);
    expect((await s.call('GET', '/convert/document/status/999999/')).status).toBe(404);
    expect((await s.call('GET', '/convert/document/status/abc/')).status).toBe(404);
    expect((await s.call('GET', '/convert/document/3b1a7c5e-0000-4000-8000-000000000000/')).status).toBe(404);
    // Another project's token is not found either.
    const { call: other } = await s.newProject();
    const mine = await convert({ paths: [`${pdf}/document/-/format/txt/`] });
    expect((await other('GET', `/convert/document/status/${mine.json.result[0].token}/`)).status).toBe(404);
  });

  it('a corrupt document fails its job with a clear error; the server carries on', { timeout: 300_000 }, async () => {
    const broken = await s.uploadFile('broken.pdf', Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(3000, 0x41)]));
    const corruptDocx = await s.uploadFile('broken.docx', Buffer.concat([(await makeDocx(1)).subarray(0, 400), Buffer.alloc(2000, 0x42)]));
    const r = await convert({ paths: [`${broken}/document/-/format/png/`, `${pdf}/document/-/format/png/-/page/9/`] });
    expect(r.json.problems).toEqual({});
    const [a, b] = await Promise.all(r.json.result.map((x: { token: number }) => waitForJob(s.call, 'document', x.token)));
    expect(a.status).toBe('failed');
    expect(a.error).toMatch(/could not be read|corrupt/i);
    expect(b.status).toBe('failed');
    expect(b.error).toBe('Page 9 is out of range: the document has 2 page(s).');
    // Sniffed as DOCX (its head is intact), so LibreOffice gets it and cannot load it.
    const c = await convert({ paths: [`${corruptDocx}/document/-/format/pdf/`] });
    expect(c.json.problems).toEqual({});
    const failed = await waitForJob(s.call, 'document', c.json.result[0].token);
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatch(/^LibreOffice could not convert the docx document/);
    expect((await s.call('GET', `/files/${pdf}/`)).status).toBe(200);
  });
});

describe('CSV', () => {
  it('the plainest CSV converts to PDF and XLSX', { timeout: 300_000 }, async () => {
    const csv = await s.uploadFile('plain.csv', 'a,b\n1,2\n', { type: 'text/csv' });
    const r = await convert({ paths: [`${csv}/document/-/format/pdf/`, `${csv}/document/-/format/xlsx/`] });
    expect(r.json.problems).toEqual({});
    const [toPdf, toXlsx] = await Promise.all(r.json.result.map((x: { token: number }) => waitForJob(s.call, 'document', x.token)));
    expect(toPdf, JSON.stringify(toPdf)).toMatchObject({ status: 'finished', error: null });
    expect(toXlsx, JSON.stringify(toXlsx)).toMatchObject({ status: 'finished', error: null });
    expect(pdfText(await cdnBytes(toPdf!.result.uuid))).toMatch(/a\s+b\s+1\s+2/);
    // The workbook holds the two rows as cells: "a" and "b" as shared strings, 1 and 2 as numbers.
    const xlsx = await unzipText(await cdnBytes(toXlsx!.result.uuid));
    expect(xlsx['xl/sharedStrings.xml']).toMatch(/<t[^>]*>a<\/t>.*<t[^>]*>b<\/t>/s);
    expect(xlsx['xl/worksheets/sheet1.xml']).toMatch(/<v>1<\/v>.*<v>2<\/v>/s);
  });
});

/**
 * Conversion tools are bounded: a job past its time limit has its whole process group killed
 * (soffice forks soffice.bin), fails with a clear error, and leaves no process and no work files
 * behind; the server keeps answering. Its own server: the time limit is tiny on purpose.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useServer } from '../helpers/use-server.js';
import { makeDocx, makeVideo, waitForJob } from './helpers.js';

const s = useServer({ env: { STOWAGE_CONVERT_DOCUMENT_TIMEOUT_MS: '300', STOWAGE_CONVERT_VIDEO_TIMEOUT_MS: '300' } });

/** Processes whose command line mentions this server's data dir (its conversion work dirs). */
function toolsOfServer(): string[] {
  const ps = execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' });
  return ps.split('\n').filter((l) => l.includes(path.join(s.server.dataDir, 'convert-work')));
}

describe('conversion time limits', () => {
  it('kills LibreOffice and the video tools at the deadline, fails the job, leaves nothing behind', { timeout: 180_000 }, async () => {
    const docx = await s.uploadFile('a.docx', await makeDocx(1));
    const mp4 = await s.uploadFile('v.mp4', makeVideo('v.mp4', 20, '640x480', ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p'], false));
    const d = await s.call('POST', '/convert/document/', { body: JSON.stringify({ paths: [`${docx}/document/-/format/pdf/`] }) });
    const v = await s.call('POST', '/convert/video/', { body: JSON.stringify({ paths: [`${mp4}/video/-/format/webm/-/quality/best/`] }) });
    expect(d.json.problems).toEqual({});
    expect(v.json.problems).toEqual({});
    const doc = await waitForJob(s.call, 'document', d.json.result[0].token);
    expect(doc).toMatchObject({ status: 'failed', error: 'LibreOffice was stopped: the conversion took longer than its time limit.' });
    const vid = await waitForJob(s.call, 'video', v.json.result[0].token);
    expect(vid.status).toBe('failed');
    expect(vid.error).toMatch(/took longer than its time limit/);
    expect(toolsOfServer()).toEqual([]);
    expect(fs.readdirSync(path.join(s.server.dataDir, 'convert-work'))).toEqual([]);
    expect((await s.call('GET', `/files/${docx}/`)).status).toBe(200);
    expect((await s.call('GET', `/files/${d.json.result[0].uuid}/`)).status).toBe(404);
  });
});

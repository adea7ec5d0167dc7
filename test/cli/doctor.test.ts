/**
 * `stowage doctor` against the real pieces: the configured metadata store (SQLite or PostgreSQL),
 * the blob store (disk, or s3rver in S3 mode), Redis, ffmpeg, LibreOffice, fonts, clamd; then
 * with pieces taken away (PATH without the programs, closed ports) and with a required one broken.
 */
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, newSchema, testS3, usingS3 } from '../helpers/server.js';

interface Report {
  name: string;
  status: 'ok' | 'off' | 'missing' | 'failed';
  detail: string;
  disables: string | null;
}

function doctor(env: Record<string, string>, args: string[] = ['--json']): Promise<{ code: number; stdout: string; stderr: string }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-doctor-'));
  const schema = newSchema();
  const full = { ...(process.env as Record<string, string>), STOWAGE_DATA_DIR: dataDir, ...(schema ? { STOWAGE_DATABASE_SCHEMA: schema } : {}), ...env };
  return new Promise((resolve) => {
    execFile(process.execPath, [path.join(ROOT, 'bin', 'stowage.js'), 'doctor', ...args], { env: full }, (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const byName = (stdout: string): Map<string, Report> => new Map((JSON.parse(stdout) as Report[]).map((r) => [r.name, r]));

function installed(program: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${program}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('stowage doctor', () => {
  it('reports every piece present as ok, and exits 0', async () => {
    const s3 = usingS3() ? await testS3() : null;
    const bucket = s3 ? await s3.createBucket() : null;
    const r = await doctor({ STOWAGE_REDIS_URL: 'redis://127.0.0.1:6379', ...(s3 && bucket ? s3.env(bucket) : {}) });
    expect(r.code, r.stderr).toBe(0);
    const reports = byName(r.stdout);
    for (const name of ['database', 'blob store', 'redis', 'ffmpeg', 'fonts']) expect(reports.get(name)?.status, name).toBe('ok');
    expect(reports.get('database')?.detail).toMatch(process.env['STOWAGE_DATABASE_URL'] ? /^PostgreSQL 127\.0\.0\.1:5432, schema t_/ : /^SQLite in /);
    expect(reports.get('blob store')?.detail).toMatch(bucket ? new RegExp(`^S3 bucket ${bucket}`) : /^disk in .* GiB free$/);
    expect(reports.get('ffmpeg')?.detail).toMatch(/^ffmpeg version /);
    expect(reports.get('redis')?.detail).toMatch(/^PONG from redis:\/\/127\.0\.0\.1:6379\/?, redis \d/);
    // LibreOffice is optional on this machine's CI list: the report must match what is installed.
    expect(reports.get('libreoffice')?.status).toBe(installed('soffice') ? 'ok' : 'missing');
    expect(reports.get('add-on uc_clamav_virus_scan')).toBeDefined();
    expect(reports.get('tool sandbox')).toMatchObject({ status: 'ok', disables: null });
    expect(reports.get('tool sandbox')?.detail).toMatch(/^active \(bubblewrap: no network, .*\); memory bound 1024 MiB per process$/);
  });

  it('says when the tool sandbox is off on purpose', async () => {
    const r = await doctor({ STOWAGE_TOOL_SANDBOX: 'off' }, []);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^off +tool sandbox +not configured\n +-> without it: confinement of LibreOffice, poppler and ffmpeg\. .*Off \(STOWAGE_TOOL_SANDBOX=off\): those tools run unconfined/m);
  });

  it('says what each missing optional piece disables, and still exits 0', async () => {
    // A PATH without ffmpeg, soffice and fc-list; Redis and clamd on ports nothing listens on.
    const [r, text] = await Promise.all([
      doctor({ PATH: '/nonexistent', STOWAGE_REDIS_URL: 'redis://127.0.0.1:1', STOWAGE_CLAMD_ADDRESS: '127.0.0.1:1' }),
      doctor({ PATH: '/nonexistent' }, []),
    ]);
    expect(r.code, r.stderr).toBe(0);
    const reports = byName(r.stdout);
    expect(reports.get('database')?.status).toBe('ok');
    expect(reports.get('ffmpeg')).toMatchObject({ status: 'missing', detail: 'ffmpeg is not installed (not found on PATH)' });
    expect(reports.get('ffmpeg')?.disables).toMatch(/gif2video/);
    expect(reports.get('libreoffice')).toMatchObject({ status: 'missing', detail: 'soffice is not installed (not found on PATH)' });
    expect(reports.get('libreoffice')?.disables).toMatch(/document conversion/);
    expect(reports.get('fonts')?.status).toBe('missing');
    expect(reports.get('tool sandbox')).toMatchObject({ status: 'missing', detail: 'prlimit (util-linux) is not installed' });
    expect(reports.get('tool sandbox')?.disables).toMatch(/document and video conversion, gif2video and video facts at upload are refused/);
    expect(reports.get('fonts')?.disables).toMatch(/text overlay/);
    expect(reports.get('redis')).toMatchObject({ status: 'missing' });
    expect(reports.get('redis')?.detail).toMatch(/^not reachable at redis:\/\/127\.0\.0\.1:1/);
    expect(reports.get('add-on uc_clamav_virus_scan')?.status).toBe('missing');
    expect(reports.get('add-on uc_clamav_virus_scan')?.detail).toMatch(/127\.0\.0\.1:1/);

    // The text report: one line per check, and the consequence under each missing one.
    expect(text.stdout).toMatch(/^ok +database +/m);
    expect(text.stdout).toMatch(/^off +redis +not configured\n +-> without it: counters and locks shared by nodes/m);
    expect(text.stdout).toMatch(/^missing +ffmpeg +ffmpeg is not installed \(not found on PATH\)\n +-> disables: gif2video/m);
  });

  it('exits 1 when a required piece (database, blob store) is broken', async () => {
    const [db, bucket] = await Promise.all([
      doctor({ STOWAGE_DATABASE_URL: 'postgres://postgres@127.0.0.1:1/test' }),
      doctor({ STOWAGE_S3_BUCKET: 'nowhere', STOWAGE_S3_ENDPOINT: 'http://127.0.0.1:1', STOWAGE_S3_FORCE_PATH_STYLE: 'on', STOWAGE_S3_ACCESS_KEY_ID: 'x', STOWAGE_S3_SECRET_ACCESS_KEY: 'y' }),
    ]);
    expect(db.code).toBe(1);
    expect(byName(db.stdout).get('database')).toMatchObject({ status: 'failed' });
    expect(byName(db.stdout).get('database')?.disables).toMatch(/cannot start/);
    expect(bucket.code).toBe(1);
    expect(byName(bucket.stdout).get('blob store')).toMatchObject({ status: 'failed' });
    expect(byName(bucket.stdout).get('database')?.status).toBe('ok');
  });
});

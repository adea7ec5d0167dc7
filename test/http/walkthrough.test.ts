/**
 * The README walkthrough is docs/walkthrough.sh; this runs it as the README says (from the
 * checkout, `docs/walkthrough.sh photo.jpg` by relative paths) against a started server (curl, the
 * CLI, real bytes) and checks that every command the README shows is one the script runs.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';

const SCRIPT = path.join(ROOT, 'docs', 'walkthrough.sh');
const s = useServer();

/** `docs/walkthrough.sh [photo]` in the checkout: the script by its relative path, its shebang picking the shell. */
function run(env: Record<string, string>, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('docs/walkthrough.sh', args, { env, cwd: ROOT, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('docs/walkthrough.sh', () => {
  it('runs from start to end against a fresh server', async () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-walkthrough-'));
    const photo = path.join(out, 'given.jpg');
    await sharp({ create: { width: 640, height: 480, channels: 3, background: '#3a7' } }).jpeg().toFile(photo);
    const demo = (JSON.parse(s.server.cli(['project', 'list', '--json'])) as Array<{ name: string; public_key: string }>).find((p) => p.name === 'demo')!;
    const activeKeys = () => (JSON.parse(s.server.cli(['key', 'list', '--pub-key', demo.public_key, '--json'])) as Array<{ revoked: boolean }>).filter((k) => !k.revoked).length;
    const keysBefore = activeKeys();
    // The photo by a path relative to the checkout, as a user in the checkout types it.
    const r = await run({ ...s.server.env, REST: s.rest, UPLOAD: s.upload, CDN: s.cdn, OUT: out }, [path.relative(ROOT, photo)]);
    expect(r.code, r.stderr).toBe(0);
    // The trace shows the commands with the secret key masked, and the key the run added is revoked.
    expect(r.stderr).toContain('-hmac <secret key>');
    expect(r.stderr).toContain(`Uploadcare.Simple ${demo.public_key}:<secret key>`);
    expect(r.stderr).not.toMatch(/-hmac '?[0-9a-f]{40}/);
    expect(r.stderr).not.toMatch(/Simple [0-9a-f]+:[0-9a-f]{40}/);
    expect(activeKeys()).toBe(keysBefore);

    // The CDN gave back the very bytes uploaded, a 100-byte range, and a real 300x225 WebP.
    expect(fs.readFileSync(path.join(out, 'original.jpg')).equals(fs.readFileSync(photo))).toBe(true);
    expect(fs.readFileSync(path.join(out, 'holiday.jpg')).equals(fs.readFileSync(photo))).toBe(true);
    expect(fs.statSync(path.join(out, 'part.bin')).size).toBe(100);
    const thumb = await sharp(path.join(out, 'thumb.webp')).metadata();
    expect([thumb.format, thumb.width, thumb.height]).toEqual(['webp', 300, 225]);
    expect(r.stdout).toMatch(/content-disposition: attachment/i);
    expect(r.stdout).toMatch(/HTTP\/1\.1 206/);
    expect(fs.readFileSync(path.join(out, 'photos.zip')).subarray(0, 2).toString()).toBe('PK');
    // Metadata set through the signed REST call, read back with Simple auth from loopback.
    expect(r.stdout).toContain('{"origin":"walkthrough","color":"blue"}');
    // The last steps deleted the file (the CDN no longer serves it) and revoked the run's key.
    expect(r.stdout).toMatch(/\n404\nrevoked key \d+\n$/);
  }, Number(process.env['STOWAGE_TEST_SLOW_TIMEOUT_MS'] ?? 180_000)); // about 25 processes (curl, the CLI) one after another

  it('is what the README shows', () => {
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## Walkthrough'), readme.indexOf('\n## ', readme.indexOf('## Walkthrough') + 3));
    const shown = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((m) => (m[1] ?? '').split('\n'));
    const script = new Set(fs.readFileSync(SCRIPT, 'utf8').split('\n').map((l) => l.trim()));
    const commands = shown.map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
    expect(commands.length).toBeGreaterThan(20);
    expect(commands.filter((l) => !script.has(l))).toEqual([]);
  });
});

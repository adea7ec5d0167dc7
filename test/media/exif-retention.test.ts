/**
 * Reading EXIF keeps nothing behind (the soak's heap growth): exifr caches every
 * options object it is given, forever, so each call must pass one of the constants in
 * src/media/pipeline/exif-options.ts. Two checks: the upload path's reader, called many times on a
 * real JPEG with EXIF, leaves the collected heap where it was; and no source file calls exifr
 * with anything else (a literal at a new call site would bring the leak back).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import sharp from 'sharp';
import { afterAll, expect, it } from 'vitest';
import { readImageInfo } from '../../src/media/pipeline/image-info.js';

const SRC = path.resolve(__dirname, '../../src');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-exif-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
const heapAfterGc = (): number => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

it('reading a photo\'s EXIF 3,000 times retains no heap', async () => {
  const photo = path.join(dir, 'photo.jpg');
  const exif = { IFD0: { Make: 'Stowage', Model: 'Test' }, IFD2: { DateTimeOriginal: '2023:03:10 16:23:15' } };
  await sharp({ create: { width: 32, height: 24, channels: 3, background: '#336699' } }).withExif(exif).jpeg().toFile(photo);
  const info = await readImageInfo(photo, 'image/jpeg');
  expect(info?.datetime_original).toBe('2023-03-10T16:23:15');

  for (let i = 0; i < 200; i++) await readImageInfo(photo, 'image/jpeg'); // warm up lazily built state
  const before = heapAfterGc();
  for (let i = 0; i < 3000; i++) await readImageInfo(photo, 'image/jpeg');
  const grown = heapAfterGc() - before;
  // Before the fix: about 4 KB per call (12 MB here). A few hundred KB of noise is allowed.
  expect(grown).toBeLessThan(2 * 1024 * 1024);
});

it('every exifr.parse call passes a constant from exif-options.ts', () => {
  const offenders: string[] = [];
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (p.endsWith('.ts')) {
        for (const m of fs.readFileSync(p, 'utf8').matchAll(/exifr\.(parse|sidecar)\(([^;]*?)\)/g)) {
          const second = m[2]!.split(',').slice(1).join(',').trim();
          // A constant, or a choice between two: `withGps ? CARRIED_EXIF : CARRIED_EXIF_NO_GPS`.
          if (second !== '' && !/^(\w+ \? )?[A-Z_]+( : [A-Z_]+)?$/.test(second)) offenders.push(`${path.relative(SRC, p)}: ${m[0].slice(0, 80)}`);
        }
      }
    }
  };
  walk(SRC);
  expect(offenders).toEqual([]);
});

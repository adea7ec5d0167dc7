/**
 * The memory part of the CDN result cache keeps its own copy of each body (the soak's
 * RSS growth): a rendered body is sharp's output buffer, allocated by a libvips thread, and
 * keeping it for minutes pinned that thread's malloc arena. A real sharp render goes in; what
 * comes out must be equal bytes in memory that is not the renderer's.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import sharp from 'sharp';
import { afterAll, expect, it } from 'vitest';
import { ResultCache, type ResultMeta } from '../../src/delivery/result-cache.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

it('a body kept in memory is a copy, not a view of the rendered buffer', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-result-cache-'));
  dirs.push(dir);
  const cache = new ResultCache(dir, 1024 ** 2, 1024 ** 2, pino({ level: 'silent' }));
  await cache.init();
  const rendered = await sharp({ create: { width: 40, height: 30, channels: 3, background: '#c04020' } }).png().toBuffer();
  const meta: ResultMeta = { contentType: 'image/png', width: 40, height: 30, format: 'png', varyAccept: false };
  const expected = Buffer.from(rendered);

  await cache.put('k', meta, rendered);
  const hit = await cache.get('k');

  expect(hit?.kind).toBe('memory');
  if (hit?.kind !== 'memory') return;
  expect(hit.body.equals(expected)).toBe(true);
  expect(hit.body.buffer).not.toBe(rendered.buffer);
  // Once the renderer's buffer is gone (here: overwritten), the cached body is unchanged.
  rendered.fill(0);
  expect(hit.body.equals(expected)).toBe(true);
  expect((await sharp(hit.body).metadata()).width).toBe(40);
});

it('answers a body kept in memory without a promise, and one only on disk through get', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-result-cache-'));
  dirs.push(dir);
  const meta: ResultMeta = { contentType: 'image/png', width: 1, height: 1, format: 'png', varyAccept: false };
  const body = Buffer.from('a rendition');
  const writer = new ResultCache(dir, 1024 ** 2, 1024 ** 2, pino({ level: 'silent' }));
  await writer.init();
  await writer.put('k', meta, body);

  // The same entry on every hit: nothing is built per request.
  const hit = writer.inMemory('k');
  expect(hit?.body.equals(body)).toBe(true);
  expect(writer.inMemory('k')).toBe(hit);
  expect(await writer.get('k')).toBe(hit);
  expect(writer.inMemory('other')).toBeNull();

  // Another process on the same directory has the entry on disk only: get reads it (and keeps it).
  const reader = new ResultCache(dir, 1024 ** 2, 1024 ** 2, pino({ level: 'silent' }));
  await reader.init();
  expect(reader.inMemory('k')).toBeNull();
  const read = await reader.get('k');
  expect(read?.kind === 'memory' && read.body.equals(body)).toBe(true);
  expect(reader.inMemory('k')?.body.equals(body)).toBe(true);
});

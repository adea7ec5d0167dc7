/**
 * Directory syncs of the local blob store (src/blobs/dir-sync.ts), watched with strace on this
 * process: a directory is opened once and kept open, a sync asked for while one of its directory
 * runs waits for the next one (the running one may have started before the caller's entry was
 * made), and every caller arriving meanwhile shares that next one.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DirectorySyncs } from '../../src/blobs/dir-sync.js';
import { haveStrace, traced } from '../helpers/strace.js';

describe.skipIf(!haveStrace)('directory syncs', () => {
  it('one open per directory; callers during a sync share the next one, which starts after they asked', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-dirsync-'));
    const syncs = new DirectorySyncs();
    const order: string[] = [];
    const lines = await traced(process.pid, ['-y', '-e', 'trace=openat,fsync,close'], async () => {
      fs.writeFileSync(path.join(dir, 'a'), 'a');
      const first = syncs.sync(dir);
      // Made while the first sync may already run: only a later sync may answer for it.
      fs.writeFileSync(path.join(dir, 'b'), 'b');
      const second = syncs.sync(dir);
      const third = syncs.sync(dir);
      expect(third).toBe(second);
      void first.then(() => order.push('first'));
      void second.then(() => order.push('second'));
      await Promise.all([first, second, third]);
      // Nothing running: a new caller starts a sync of its own, on the descriptor kept open.
      await syncs.sync(dir);
    });
    expect(order).toEqual(['first', 'second']);
    const ofDir = lines.filter((l) => l.includes(`<${dir}>`) || l.includes(`"${dir}"`));
    expect(ofDir.filter((l) => /openat\(/.test(l))).toHaveLength(1);
    expect(ofDir.filter((l) => /fsync\(.*= 0/.test(l))).toHaveLength(3);
    expect(ofDir.filter((l) => /close\(/.test(l))).toEqual([]);
    await syncs.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a directory that is missing rejects, and the next sync tries again', async () => {
    const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-dirsync-')), 'later');
    const syncs = new DirectorySyncs();
    await expect(syncs.sync(dir)).rejects.toMatchObject({ code: 'ENOENT' });
    fs.mkdirSync(dir);
    await expect(syncs.sync(dir)).resolves.toBeUndefined();
    await syncs.close();
  });
});

/**
 * SQLite checkpoints the WAL inside the COMMIT that crosses its threshold, on the event loop (two
 * fsyncs and a copy of the changed pages): the store lets the WAL reach 4,000 pages between two
 * (src/db/connect.ts), not SQLite's 1,000. Watched from outside: the WAL file's frames of its
 * current generation (its header's salt) keep growing past 1,000 as uploads commit.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { usingPostgres } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';

/** Frames of the WAL's current generation: a checkpoint followed by a write starts a new one from its first frame. */
function currentFrames(wal: string): number {
  const buf = fs.readFileSync(wal);
  if (buf.length < 32) return 0;
  const pageSize = buf.readUInt32BE(8);
  const salt = [buf.readUInt32BE(16), buf.readUInt32BE(20)];
  let frames = 0;
  for (let off = 32; off + 24 + pageSize <= buf.length; off += 24 + pageSize) {
    if (buf.readUInt32BE(off + 8) !== salt[0] || buf.readUInt32BE(off + 12) !== salt[1]) break;
    frames++;
  }
  return frames;
}

describe.skipIf(usingPostgres())('SQLite WAL checkpoints', () => {
  const srv = useServer();

  it('the WAL grows past 1,000 pages before a checkpoint starts it again', async () => {
    const wal = path.join(srv.server.dataDir, 'stowage.sqlite-wal');
    let frames = 0;
    // About 15-20 pages per stored upload: at 1,000 the WAL restarted before 1,100 frames.
    for (let i = 0; i < 400 && frames <= 1100; i++) {
      await srv.uploadFile(`f${i}.bin`, crypto.randomBytes(64));
      frames = currentFrames(wal);
    }
    expect(frames).toBeGreaterThan(1100);
  }, 120_000);
});

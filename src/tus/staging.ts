/**
 * Where a tus upload's bytes wait until it is complete: one file per upload under
 * `<dataDir>/tus/`, named by the upload's id (a UUID, checked, so no path leaves the directory).
 * Object storage cannot append, so with S3 too the bytes are staged here and moved into the blob
 * store at completion.
 *
 * Durability: bytes count only once fsynced (`sync`), and the caller records the offset after
 * that. A node killed mid-chunk can leave bytes past the recorded offset; `open` truncates the file
 * back to the recorded offset before writing, so those bytes (never acknowledged) are dropped.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { syncOnce } from '../blobs/dir-sync.js';
import { makeDirDurably } from '../blobs/durable-dirs.js';

const ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const isUploadId = (id: string): boolean => ID.test(id);

export class TusStaging {
  readonly dir: string;

  constructor(dataDir: string) {
    this.dir = path.join(path.resolve(dataDir), 'tus');
  }

  private pathOf(id: string): string {
    if (!isUploadId(id)) throw new Error(`not a tus upload id: ${id}`);
    return path.join(this.dir, id);
  }

  /** Creates the empty staging file, durably (the directory entry too). */
  async create(id: string): Promise<void> {
    await makeDirDurably(this.dir);
    const fh = await fsp.open(this.pathOf(id), 'wx');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
    await syncOnce(this.dir);
  }

  /** Opens the upload's file for writing at `offset`, dropping anything past it. Null when the file is gone. */
  async open(id: string, offset: number): Promise<ChunkWriter | null> {
    let fh: fsp.FileHandle;
    try {
      fh = await fsp.open(this.pathOf(id), 'r+');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
    try {
      await fh.truncate(offset);
    } catch (err) {
      await fh.close();
      throw err;
    }
    return new ChunkWriter(fh, offset);
  }

  read(id: string): Readable {
    return fs.createReadStream(this.pathOf(id));
  }

  async remove(id: string): Promise<void> {
    await fsp.rm(this.pathOf(id), { force: true });
  }

  /** Staging files (by upload id) last written before `olderThanMs` ago. */
  async staleIds(olderThanMs: number): Promise<string[]> {
    let names: string[];
    try {
      names = await fsp.readdir(this.dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    const out: string[] = [];
    for (const name of names.filter(isUploadId)) {
      const st = await fsp.stat(path.join(this.dir, name)).catch(() => null);
      if (st && Date.now() - st.mtimeMs > olderThanMs) out.push(name);
    }
    return out;
  }
}

/** Writes one PATCH's bytes at consecutive positions; `sync` makes them durable. */
export class ChunkWriter {
  private position: number;

  constructor(
    private readonly fh: fsp.FileHandle,
    private readonly start: number,
  ) {
    this.position = start;
  }

  /** Bytes written past the start (durable or not). */
  get written(): number {
    return this.position - this.start;
  }

  async write(chunk: Buffer): Promise<void> {
    let done = 0;
    while (done < chunk.length) {
      const { bytesWritten } = await this.fh.write(chunk, done, chunk.length - done, this.position);
      done += bytesWritten;
      this.position += bytesWritten;
    }
  }

  async sync(): Promise<void> {
    await this.fh.datasync();
  }

  /** Drops this chunk's bytes (a checksum mismatch, an oversize body). */
  async discard(): Promise<void> {
    await this.fh.truncate(this.start);
    this.position = this.start;
  }

  async close(): Promise<void> {
    await this.fh.close();
  }
}

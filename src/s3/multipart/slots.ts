/**
 * Parts written where the object ends up, on a blob store with local files and `move` (disk): each
 * upload has one data file, and part n is written at (n - 1) × slot, the slot being the declared
 * length of the first part that arrived (clients send every part but the last at one size: aws-cli,
 * rclone, the SDKs' managed uploads). A completion naming parts 1..k, all but the last exactly one
 * slot long, cuts the file to their total and moves it under the new file's blob key: no byte is
 * copied (the Upload API's multipart does the same, uploads/multipart/in-place-part-store.ts).
 * Other completions copy the parts (service.ts reads them from here with `read`).
 *
 * One node owns a data dir, so the guard is in memory: a part is written into the file only while no
 * completion holds the upload, and a completion waits for the writes in flight before it reads or
 * moves the file (a write still running would land in the moved file). Writes of one part run one
 * after another (two at once would interleave their bytes).
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { BatchedFileWriter } from '../../writes/batched-file-writer.js';
import { makeDirDurably } from '../../blobs/durable-dirs.js';
import { syncOnce } from '../../blobs/dir-sync.js';
import { digestLocalFile } from '../../digests/digest-threads.js';
import { WrittenBytesDigest } from '../../digests/written-digest.js';
import { BlobNotFound, type PutResult } from '../../blobs/store.js';
import type { LocalMovableStore } from '../../uploads/multipart/in-place-part-store.js';

/** S3's largest object: a part whose slot ends past it is written as a blob of its own. */
const MAX_DATA_FILE_BYTES = 5 * 1024 ** 4;

/** A part as the completion sees it. */
export interface SlotPart {
  part_number: number;
  size: number;
}

interface Gate {
  /** Completions holding the upload: while any does, no part is written into its file. */
  holds: number;
  writes: Set<Promise<unknown>>;
}

export class SlotParts {
  private readonly gates = new Map<string, Gate>();
  /** The last write of each `<upload>/<part>` on this node. */
  private readonly writing = new Map<string, Promise<unknown>>();

  constructor(private readonly local: LocalMovableStore, private readonly prefix: string) {}

  dataKey(uploadId: string): string {
    return `${this.prefix}${uploadId.slice(0, 2)}/${uploadId}/data`;
  }

  /** Whether part `partNumber` of `size` bytes fits its slot. */
  static fits(slot: number, partNumber: number, size: number): boolean {
    return size <= slot && partNumber * slot <= MAX_DATA_FILE_BYTES;
  }

  /** Whether `parts` (in order, all in their slots) are 1..k, all but the last a whole slot: then the data file is the object. */
  static contiguous(slot: number, parts: SlotPart[]): boolean {
    return parts.every((p, i) => p.part_number === i + 1 && (i === parts.length - 1 || Number(p.size) === slot));
  }

  /**
   * Writes part `partNumber` in its slot, hashing it on the way. Null (nothing written, `body`
   * untouched) while a completion holds the upload: the caller stores the part elsewhere.
   */
  write(uploadId: string, partNumber: number, slot: number, body: Readable, onTooLarge: () => Error): Promise<PutResult | null> {
    const gate = this.gate(uploadId);
    if (gate.holds > 0) return Promise.resolve(null);
    const key = `${uploadId}/${partNumber}`;
    const run = (this.writing.get(key) ?? Promise.resolve())
      .catch(() => undefined)
      .then(() => (gate.holds > 0 ? null : this.writeAt(uploadId, partNumber, slot, body, onTooLarge)));
    this.writing.set(key, run);
    gate.writes.add(run);
    const settled = () => {
      if (this.writing.get(key) === run) this.writing.delete(key);
      gate.writes.delete(run);
      this.dropIdle(uploadId, gate);
    };
    run.then(settled, settled);
    return run;
  }

  private async writeAt(uploadId: string, partNumber: number, slot: number, body: Readable, onTooLarge: () => Error): Promise<PutResult> {
    const file = this.local.localPath(this.dataKey(uploadId));
    await makeDirDurably(path.dirname(file));
    // Created on the first part; a write past its end leaves a hole where earlier slots will go.
    const fd = await new Promise<number>((resolve, reject) => fs.open(file, fs.constants.O_RDWR | fs.constants.O_CREAT, 0o600, (err, f) => (err ? reject(err) : resolve(f))));
    // The file's name must be as durable as the part's bytes before the part is acknowledged:
    // its directory is synced while the part streams in (once per part: any part may be the first).
    const named = syncOnce(path.dirname(file));
    named.catch(() => undefined); // awaited below; until then a failure is not unhandled
    const start = (partNumber - 1) * slot;
    // Hashed in the digest threads from the bytes just written into the slot (page cache): the
    // main thread neither hashes nor copies them (written-digest.ts).
    const digest = new WrittenBytesDigest(file, slot, start);
    const writer = new BatchedFileWriter(file, {
      fd,
      start,
      maxBytes: slot,
      onTooLarge,
      onChunk: (chunk, size) => digest.received(chunk, size),
      onWritten: (end) => digest.written(end),
      onAllWritten: (size) => digest.allWritten(size),
    });
    try {
      // Synced before it resolves: the part's row is recorded only once its bytes are durable.
      await pipeline(body, writer);
      await named;
      return { size: writer.size, ...(await digest.digest(writer.size)) };
    } catch (err) {
      digest.abandon();
      throw err;
    }
  }

  /** The bytes of a part in its slot. */
  read(uploadId: string, slot: number, part: SlotPart): Promise<Readable> {
    const size = Number(part.size);
    if (size === 0) return Promise.resolve(Readable.from([]));
    const start = (part.part_number - 1) * slot;
    return this.local.get(this.dataKey(uploadId), { start, end: start + size - 1 });
  }

  /** Stops new writes into the upload's file and waits for those in flight; answers the release. */
  async hold(uploadId: string): Promise<() => void> {
    const gate = this.gate(uploadId);
    gate.holds++;
    await Promise.allSettled([...gate.writes]);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      gate.holds--;
      this.dropIdle(uploadId, gate);
    };
  }

  /**
   * Makes the data file the object: cut to `total` bytes (parts past the chosen ones go), synced,
   * its digests taken (one read from the page cache in the digest threads; none when `digestsLater`,
   * a job computes them) and moved under `destKey`.
   */
  async moveInto(uploadId: string, total: number, destKey: string, digestsLater: boolean): Promise<PutResult> {
    const dataKey = this.dataKey(uploadId);
    const file = this.local.localPath(dataKey);
    const handle = await fsp.open(file, 'r+').catch((err: NodeJS.ErrnoException) => {
      throw err.code === 'ENOENT' ? new BlobNotFound(dataKey) : err;
    });
    try {
      await handle.truncate(total);
      await handle.sync();
    } finally {
      await handle.close();
    }
    const put: PutResult = digestsLater ? { size: total, md5: '', sha256: null } : await digestLocalFile(file, total);
    await this.local.move(dataKey, destKey);
    return put;
  }

  /** Puts a moved data file back (its row did not commit): the upload's parts are whole again. */
  moveBack(uploadId: string, fromKey: string): Promise<void> {
    return this.local.move(fromKey, this.dataKey(uploadId));
  }

  remove(uploadId: string): Promise<void> {
    return this.local.delete(this.dataKey(uploadId));
  }

  private gate(uploadId: string): Gate {
    let gate = this.gates.get(uploadId);
    if (!gate) {
      gate = { holds: 0, writes: new Set() };
      this.gates.set(uploadId, gate);
    }
    return gate;
  }

  private dropIdle(uploadId: string, gate: Gate): void {
    if (gate.holds === 0 && gate.writes.size === 0 && this.gates.get(uploadId) === gate) this.gates.delete(uploadId);
  }
}

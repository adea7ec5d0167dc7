/**
 * Multipart parts written where they end up (blob stores with local files and `move`, i.e. disk):
 * every part PUT writes its bytes at the part's offset in one data file per upload, fsyncs it,
 * then records the part (its size) in a small marker blob. Completion checks the markers and
 * moves the file under the file's blob key: nothing is copied, so a 1 GiB upload writes 1 GiB
 * (the copying store wrote it twice). The part's bytes are not hashed on the way in: its ETag is
 * derived from its place and size (partEtag).
 *
 * The whole file's digests (MD5, SHA-256) are computed as the parts arrive, in order, from the
 * bytes just written (page cache), in the digest threads, so completion need not read 1 GiB again
 * (running-digest.ts); a completion on another node, after a restart or after a part was rewritten
 * reads the file once, in those threads too.
 *
 * A re-PUT replaces its part: it drops the marker first, so a completion never takes a part whose
 * bytes are being rewritten (missing marker: the existing 400), and a re-PUT that fails leaves the
 * part missing rather than half old, half new. `beforeWrite` (the route: the upload is open, no
 * completion holds it) runs before and again after the marker is dropped: together with the
 * completion's claim, a part is never written into a file a completion is reading or has moved
 * (see `writeInPlace`).
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { finished, Readable, type Writable } from 'node:stream';
import type { BlobStore, PutResult } from '../../blobs/store.js';
import { BlobNotFound } from '../../blobs/store.js';
import { BlobPartStore, partEtag, type PartTarget, type PartWrite, type StoredPart, type WriteOptions } from './part-store.js';
import { RunningDigests } from './running-digest.js';
import { digestLocalFile } from '../../digests/digest-threads.js';
import { digestsLaterFor } from '../../digests/digest.js';
import { BatchedFileWriter } from '../../writes/batched-file-writer.js';
import { makeDirDurably } from '../../blobs/durable-dirs.js';

/** The blob store abilities this store needs. */
export type LocalMovableStore = BlobStore & Required<Pick<BlobStore, 'localPath' | 'move'>>;

export function hasLocalFilesAndMove(blobs: BlobStore): blobs is LocalMovableStore {
  return typeof blobs.localPath === 'function' && typeof blobs.move === 'function';
}

/** Markers written before the part ETag changed also hold `md5`; only `size` is read. */
interface PartMarker {
  size: number;
}

export class InPlacePartStore extends BlobPartStore {
  /** Writes of one part on this node run one after another (two at once would interleave their bytes). */
  private readonly writing = new Map<string, Promise<unknown>>();
  private readonly digests = new RunningDigests();

  constructor(
    private readonly local: LocalMovableStore,
    uploadBase: () => string,
    secret: () => Promise<Buffer>,
    /** Uploads at least this large are committed without digests, computed after the answer (STOWAGE_DIGEST_LATER_BYTES). */
    private readonly digestLaterBytes = 0,
  ) {
    super(local, uploadBase, secret);
  }

  static dataKey(uuid: string): string {
    return `multipart/${uuid.slice(0, 2)}/${uuid}/data`;
  }

  static markerKey(uuid: string, part: number): string {
    return `multipart/${uuid.slice(0, 2)}/${uuid}/${part}.done`;
  }

  override writePart(w: PartWrite, body: Readable, opts: WriteOptions): Promise<StoredPart> {
    const key = `${w.uuid}/${w.part}`;
    const run = (this.writing.get(key) ?? Promise.resolve()).catch(() => undefined).then(() => this.writeInPlace(w, body, opts));
    this.writing.set(key, run);
    const forget = () => {
      if (this.writing.get(key) === run) this.writing.delete(key);
    };
    run.then(forget, forget);
    return run;
  }

  private async writeInPlace(w: PartWrite, body: Readable, opts: WriteOptions): Promise<StoredPart> {
    // Refused without touching the part while a completion holds (or held) the upload. Then the
    // marker, then the state again: a completion that claimed the upload before the second check
    // sees the part missing; one that claims it after is refused by that check.
    await opts.beforeWrite();
    await unlinkIfPresent(this.local.localPath(InPlacePartStore.markerKey(w.uuid, w.part)));
    await opts.beforeWrite();
    const file = this.local.localPath(InPlacePartStore.dataKey(w.uuid));
    const later = this.digestsLater(w.size);
    if (!later) this.digests.partWriteBegins(w.uuid, w.part);
    const fd = await openDataFile(file, w.size);
    // Positional writes at the part's offset, synced before the marker says the part is there.
    const writer = new BatchedFileWriter(file, { fd, flags: 'r+', start: (w.part - 1) * w.partSize, maxBytes: w.partSize, onTooLarge: opts.onTooLarge });
    await pipeInto(body, writer);
    const size = writer.size;
    const marker: PartMarker = { size };
    // A marker's digests would be unused, and hashing one woke a digest thread (about 10 MB each).
    // Created in place (dropped above, so new): no temp file, rename or mkdir per part. A crash
    // mid-write can leave it partial, read as missing (`marker`): its part was never acknowledged.
    await this.local.put(InPlacePartStore.markerKey(w.uuid, w.part), Readable.from([Buffer.from(JSON.stringify(marker))]), {
      fresh: true,
      skipDigests: true,
      maxBytes: MARKER_MAX_BYTES,
      onTooLarge: () => new Error('part marker too long'),
    });
    if (!later) this.digests.partWritten(file, w, size);
    return { size, etag: partEtag(w.uuid, w.part, size) };
  }

  override async partSizes(t: PartTarget): Promise<Array<number | null>> {
    return Promise.all(Array.from({ length: t.parts }, async (_, i) => (await this.marker(t.uuid, i + 1))?.size ?? null));
  }

  /**
   * The parts are already in place (the caller checked their sizes): cut the file to the upload's
   * size (a last part sent too long may have written past it), fsync, take its digests (MD5 for the
   * CDN's ETag, SHA-256 for the content address) from the running digest when it covered every
   * part here, else read the file once for them in the digest threads (a large upload: none, a job
   * computes them after the answer), and move it under `destKey`.
   * After a completion that moved it but failed later, the moved file is reused.
   */
  override async assemble(t: PartTarget, destKey: string, expectedBytes: number): Promise<PutResult> {
    const dataKey = InPlacePartStore.dataKey(t.uuid);
    const file = this.local.localPath(dataKey);
    const handle = await fsp.open(file, 'r+').catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return null;
      throw err;
    });
    if (!handle) {
      if ((await this.local.size(destKey)) === expectedBytes) return digestLocalFile(this.local.localPath(destKey), expectedBytes);
      throw new BlobNotFound(dataKey);
    }
    try {
      await handle.truncate(expectedBytes);
      await handle.sync();
    } finally {
      await handle.close();
    }
    const put = this.digestsLater(expectedBytes) ? { size: expectedBytes, md5: '', sha256: null } : await this.digestsOf(t, file, expectedBytes);
    await this.local.move(dataKey, destKey);
    return put;
  }

  /** From the running digest when it covered every part here, else from one read of the file. */
  private async digestsOf(t: PartTarget, file: string, expectedBytes: number): Promise<PutResult> {
    return (await this.digests.take(t.uuid, t.parts, expectedBytes)) ?? (await digestLocalFile(file, expectedBytes));
  }

  /** A large upload's digests are computed after its completion answers (files/digest-later.ts). */
  private digestsLater(uploadBytes: number): boolean {
    return digestsLaterFor(this.digestLaterBytes, uploadBytes);
  }

  override async removeParts(t: PartTarget): Promise<void> {
    this.digests.forget(t.uuid);
    const keys = [InPlacePartStore.dataKey(t.uuid), ...Array.from({ length: t.parts }, (_, i) => InPlacePartStore.markerKey(t.uuid, i + 1))];
    // Plain unlinks (the store's delete looks each path up first: twice the thread pool's round trips, 206 for 1 GiB).
    await Promise.all(keys.map((key) => unlinkIfPresent(this.local.localPath(key)).catch(() => undefined)));
  }

  private async marker(uuid: string, part: number): Promise<PartMarker | null> {
    const bytes = await readSmallFile(this.local.localPath(InPlacePartStore.markerKey(uuid, part)), MARKER_MAX_BYTES);
    try {
      return bytes ? (JSON.parse(bytes.toString('utf8')) as PartMarker) : null;
    } catch (err) {
      // Unreadable: being written, or cut by a crash before its part was acknowledged.
      if (err instanceof SyntaxError) return null;
      throw err;
    }
  }
}

/** A marker is a few bytes of JSON: one longer is refused when written. */
const MARKER_MAX_BYTES = 4096;

/**
 * The first `max` bytes of a file (null when there is none): one open, one read and one close. A
 * completion reads every part's marker (205 for 1 GiB in 5 MiB parts); through the blob store's
 * read stream each one cost a 256 KiB read buffer, a second read for its end and a stream's events,
 * and the markers took most of a 1 GiB completion's time.
 */
async function readSmallFile(file: string, max: number): Promise<Buffer | null> {
  const fd = await openFd(file, fs.constants.O_RDONLY).catch(nullWhenMissing);
  if (fd === null) return null;
  try {
    const buf = Buffer.allocUnsafe(max);
    const { bytesRead } = await readFd(fd, buf, 0, max, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await closeFd(fd);
  }
}

/**
 * Pipes the request's body into `writer` and resolves once the writer has finished (its bytes
 * synced). Unlike `pipeline`, a failure destroys the writer only: the request is left whole
 * (MultipartStore.writePart), with no stream in between (a PassThrough cost every 64 KiB chunk a
 * transform, a push and an event more on the main thread).
 */
function pipeInto(body: Readable, writer: Writable): Promise<void> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const settle = (err?: Error | null) => {
      if (settled) return;
      settled = true;
      stopWatchingBody();
      if (!err) return resolve();
      body.unpipe(writer);
      writer.destroy(err);
      reject(err);
    };
    // The body failing or cut short (the client went away) fails the part; its end ends the writer.
    const stopWatchingBody = finished(body, { writable: false }, (err) => {
      if (err) settle(err);
    });
    finished(writer, (err) => settle(err));
    body.pipe(writer);
  });
}

/**
 * The upload's data file, open for writing: created at its full size by the first part (sparse: no
 * bytes written), never shrunk (parts written before keep their bytes, whichever part comes first).
 * Every later part finds it and opens it alone: no mkdir, no second open (each a round trip to
 * libuv's thread pool and a callback on the main thread, per part). A data file that exists was
 * created after its directory was made durably (below), so finding it needs no directory sync.
 */
async function openDataFile(file: string, size: number): Promise<number> {
  const fd = (await openFd(file, fs.constants.O_RDWR).catch(nullWhenMissing)) ?? (await createDataFile(file));
  try {
    if ((await fstat(fd)).size < size) await ftruncate(fd, size);
    return fd;
  } catch (err) {
    fs.close(fd, () => undefined);
    throw err;
  }
}

async function createDataFile(file: string): Promise<number> {
  // The file's own entry is synced with its directory by the part's marker (put beside it).
  await makeDirDurably(path.dirname(file));
  return openFd(file, fs.constants.O_RDWR | fs.constants.O_CREAT);
}

/** Removes a file (none is fine): a plain unlink, where fs.rm looks the path up first. */
async function unlinkIfPresent(file: string): Promise<void> {
  await fsp.unlink(file).catch(nullWhenMissing);
}

function nullWhenMissing(err: NodeJS.ErrnoException): null {
  if (err.code === 'ENOENT') return null;
  throw err;
}

// Plain descriptors (the writer closes its own): a FileHandle's descriptor must be closed by its handle.
const openFile = promisify(fs.open);
const openFd = (file: string, flags: number) => openFile(file, flags, 0o600);
const fstat = promisify(fs.fstat);
const ftruncate = promisify(fs.ftruncate);
const readFd = promisify(fs.read);
const closeFd = promisify(fs.close);

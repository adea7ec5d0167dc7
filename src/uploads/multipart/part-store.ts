/**
 * Where multipart parts go. The HTTP handlers only talk to this interface, never to a backend.
 *
 * Design note (object storage, later issue): an S3 implementation returns presigned UploadPart
 * URLs from `partUrls` (parts then bypass this server entirely, so `acceptsParts` is false and the
 * PUT route answers 404), reads part sizes with ListParts, and `assemble` becomes
 * CompleteMultipartUpload — no bytes flow through the node (s3-part-store.ts). The implementation
 * below receives the parts itself through signed, expiring URLs on the Upload API, keeps each part
 * as a blob and concatenates them by streaming into the blob store at completion (every byte
 * written twice): the fallback for a store without local files. On disk, in-place-part-store.ts
 * writes each part at its offset in the final file instead.
 */
import crypto from 'node:crypto';
import { PassThrough, Readable } from 'node:stream';
import type { BlobStore, PutResult } from '../../blobs/store.js';
import { safeEqual } from '../../core/ids.js';

export interface PartTarget {
  uuid: string;
  parts: number;
}

/** Where one part goes: part `part` (from 1) of `uuid`, at offset (part - 1) * partSize of `size` bytes. */
export interface PartWrite {
  uuid: string;
  part: number;
  partSize: number;
  size: number;
}

export interface WriteOptions {
  /** The error for a body longer than partSize. */
  onTooLarge: () => Error;
  /**
   * Runs before any byte is written (the in-place store runs it again once the part's previous
   * copy no longer counts); throws to refuse the write (the upload is being completed or done).
   */
  beforeWrite: () => Promise<void>;
}

export interface StoredPart {
  size: number;
  /** The part PUT's ETag, unquoted: `partEtag(uuid, part, size)`. */
  etag: string;
}

/**
 * A part's ETag: 32 hex digits (the shape S3 answers) derived from the upload, the part number and
 * its size, not from its bytes. No client reads it (wire-reference §1.8: the JS and Python SDKs
 * ignore it; completion takes no ETags), and an MD5 of every part cost the receiving core about
 * 1.4 s of CPU per GiB on top of the whole file's MD5 (docs/performance.md). Stable: a re-PUT of
 * the same part with the same size answers the same ETag, whatever its bytes.
 */
export function partEtag(uuid: string, part: number, size: number): string {
  return crypto.createHash('md5').update(`${uuid}/${part}/${size}`).digest('hex');
}

export interface MultipartStore {
  /** True when clients PUT parts to this server (so the part route is served). */
  readonly acceptsParts: boolean;
  /** One absolute URL per part, in order; valid until `expiresAtS` (Unix seconds). */
  partUrls(target: PartTarget, expiresAtS: number): Promise<string[]>;
  /** Verifies a part URL's signature; false when forged or expired. */
  verifyPartUrl(uuid: string, part: number, expiresAtS: string, sig: string): Promise<boolean>;
  /**
   * Stores one part; a retry replaces it. Rejects past `partSize` bytes. Resolves with the part's
   * size and ETag (partEtag). `body` is the request: failing mid-body (a part over part_size sent
   * without a length, a full disk), a store stops reading it but never destroys it. A destroyed
   * request leaves the rest of its body unread on a paused socket, so the kept-alive connection's
   * next request waited until the body idle timeout reset it (docs/reliability.md); undestroyed,
   * the answer drains the rest or closes cleanly (http/common/unread-body.ts).
   */
  writePart(w: PartWrite, body: Readable, opts: WriteOptions): Promise<StoredPart>;
  /** Size of each part (index 0 = part 1), null when not uploaded. */
  partSizes(target: PartTarget): Promise<Array<number | null>>;
  /** Streams the parts in order into `destKey`; memory stays flat whatever the size. */
  assemble(target: PartTarget, destKey: string, expectedBytes: number, onTooLarge: () => Error): Promise<PutResult>;
  /** Drops every part (idempotent). */
  removeParts(target: PartTarget): Promise<void>;
}

export class BlobPartStore implements MultipartStore {
  readonly acceptsParts = true;

  constructor(
    private readonly blobs: BlobStore,
    private readonly uploadBase: () => string,
    private readonly secret: () => Promise<Buffer>,
  ) {}

  static partKey(uuid: string, part: number): string {
    return `multipart/${uuid.slice(0, 2)}/${uuid}/${part}`;
  }

  async partUrls(t: PartTarget, expiresAtS: number): Promise<string[]> {
    const key = await this.secret();
    const urls: string[] = [];
    for (let n = 1; n <= t.parts; n++) {
      urls.push(`${this.uploadBase()}/multipart/upload/${t.uuid}/${n}/?expires=${expiresAtS}&sig=${sign(key, t.uuid, n, String(expiresAtS))}`);
    }
    return urls;
  }

  async verifyPartUrl(uuid: string, part: number, expiresAtS: string, sig: string): Promise<boolean> {
    if (!/^\d{1,12}$/.test(expiresAtS) || Number(expiresAtS) * 1000 < Date.now()) return false;
    return safeEqual(sign(await this.secret(), uuid, part, expiresAtS), sig);
  }

  async writePart(w: PartWrite, body: Readable, opts: WriteOptions): Promise<StoredPart> {
    await opts.beforeWrite();
    // The blob store destroys what it reads when it fails: a stream of its own, not the request.
    const own = body.pipe(new PassThrough({ highWaterMark: 64 * 1024 }));
    const { size } = await this.blobs.put(BlobPartStore.partKey(w.uuid, w.part), own, { maxBytes: w.partSize, onTooLarge: opts.onTooLarge });
    return { size, etag: partEtag(w.uuid, w.part, size) };
  }

  partSizes(t: PartTarget): Promise<Array<number | null>> {
    return Promise.all(Array.from({ length: t.parts }, (_, i) => this.blobs.size(BlobPartStore.partKey(t.uuid, i + 1))));
  }

  assemble(t: PartTarget, destKey: string, expectedBytes: number, onTooLarge: () => Error): Promise<PutResult> {
    const blobs = this.blobs;
    async function* concat(): AsyncGenerator<Buffer> {
      for (let n = 1; n <= t.parts; n++) {
        for await (const chunk of await blobs.get(BlobPartStore.partKey(t.uuid, n))) yield chunk as Buffer;
      }
    }
    return this.blobs.put(destKey, Readable.from(concat(), { objectMode: false }), { maxBytes: expectedBytes, onTooLarge });
  }

  async removeParts(t: PartTarget): Promise<void> {
    await Promise.all(Array.from({ length: t.parts }, (_, i) => this.blobs.delete(BlobPartStore.partKey(t.uuid, i + 1)).catch(() => undefined)));
  }
}

function sign(key: Buffer, uuid: string, part: number, expires: string): string {
  return crypto.createHmac('sha256', key).update(`${uuid}/${part}/${expires}`).digest('hex');
}

/**
 * BlobStore: where file bytes live. A small core every backend implements, plus optional abilities
 * that callers ask for (never for a backend name). Keys are opaque relative strings chosen by core.
 */
import type { Readable } from 'node:stream';

export interface PutResult {
  size: number;
  /** Lowercase hex MD5 of the bytes (the CDN's strong ETag); empty when the caller asked for none (`skipDigests`). */
  md5: string;
  /** Lowercase hex SHA-256 of the bytes (their content address, docs/storage.md); null when left for later. */
  sha256: string | null;
  /** The first min(size, keepHead) bytes, when `put` was asked to keep them and the store can. */
  head?: Buffer;
}

export interface PutOptions {
  maxBytes: number;
  onTooLarge: () => Error;
  /** Keep this many first bytes in memory and return them as `head` (type sniffing of new uploads). */
  keepHead?: number;
  /**
   * The key is new and nothing reads it before the caller commits a row naming it (an upload's
   * fresh uuid): a store may then write the bytes in place instead of beside it and renaming
   * (fs: one file created instead of a temporary one plus a rename). A crash mid-write leaves a
   * partial blob that no row names, which the leftovers sweep reclaims. If the key exists after
   * all (a retried conversion), the store replaces it atomically as usual.
   */
  fresh?: boolean;
  /**
   * The caller needs no digests now: a large file's come from a job after the answer
   * (files/digest-later.ts), a multipart part's marker never needs any. A store that would compute
   * them from its own local file skips them (and its digest threads stay asleep): `md5` is then
   * empty and `sha256` null. A store that hashes while streaming to a remote service (S3) computes
   * them anyway.
   */
  skipDigests?: boolean;
}

export interface ByteRange {
  /** Inclusive start and end offsets, already validated against the blob size. */
  start: number;
  end: number;
}

export interface BlobStore {
  /**
   * Streams `source` into `key`. Resolves only once the bytes are durable and visible under `key`
   * (fs: written, fsynced and renamed; S3: object complete). Rejects, leaving nothing under `key`,
   * when the source fails or exceeds `maxBytes` (error from `onTooLarge`).
   */
  put(key: string, source: Readable, opts: PutOptions): Promise<PutResult>;
  /** Reads the whole blob or an inclusive byte range. Rejects with BlobNotFound when absent. */
  get(key: string, range?: ByteRange): Promise<Readable>;
  /** Size in bytes, or null when absent. */
  size(key: string): Promise<number | null>;
  /** Removes the blob; succeeds when it is already absent. */
  delete(key: string): Promise<void>;
  /** Optional ability: a local file path with the bytes, for tools that want random access (sharp, ffprobe). */
  localPath?(key: string): string;
  /**
   * Optional ability: moves the blob at `from` to `to` (replacing it), atomically and durably (fs: a
   * rename and the directories fsynced), without copying its bytes. Rejects with BlobNotFound when
   * `from` is absent.
   */
  move?(from: string, to: string): Promise<void>;
  /** Optional ability: clients upload multipart parts straight to the store through presigned URLs. */
  multipart?: PresignedMultipart;
  /**
   * Optional: this node's directory for short-lived local files (copies of blobs for stores
   * without `localPath`, a render's scratch images), swept by `sweepTemp` after a crash.
   */
  spoolDir?: string;
  /** Optional ability: every key under `prefix`, with when it was last written (the leftovers sweep). */
  list?(prefix: string): AsyncIterable<BlobEntry>;
  /** Optional: removes this node's temporary files older than `olderThanMs`; returns how many. */
  sweepTemp?(olderThanMs: number): Promise<number>;
  /** Optional: readiness probe (throws when the store is unreachable). */
  check?(): Promise<void>;
  /** Optional: releases connections at shutdown. */
  close?(): void;
}

export interface BlobEntry {
  key: string;
  /** Last write, ms since the epoch (fs: mtime; S3: LastModified). */
  modifiedMs: number;
}

export interface UploadedPart {
  partNumber: number;
  size: number;
  etag: string;
}

/** S3-style multipart upload whose parts never pass through a node. */
export interface PresignedMultipart {
  /** Starts an upload that completes into `key`; returns its upload id. */
  create(key: string, contentType: string): Promise<string>;
  /** A URL a client may PUT part `partNumber` to, without credentials, for `expiresInS` seconds. */
  partUrl(key: string, uploadId: string, partNumber: number, expiresInS: number): Promise<string>;
  /**
   * Sends part `partNumber`, exactly `size` bytes of `body`, through this node (a client of another
   * protocol hands the part to the node); answers the store's ETag for it, which `complete` needs.
   * `signal` stops the request: a body that failed will never send the bytes the store waits for.
   */
  uploadPart(key: string, uploadId: string, partNumber: number, body: Readable, size: number, signal?: AbortSignal): Promise<string>;
  /** Parts received so far, in order. */
  listParts(key: string, uploadId: string): Promise<UploadedPart[]>;
  /** Assembles the parts into `key`; the object appears only now. */
  complete(key: string, uploadId: string, parts: UploadedPart[]): Promise<void>;
  /** Drops the upload and its parts; succeeds when already gone. */
  abort(key: string, uploadId: string): Promise<void>;
}

export class BlobNotFound extends Error {
  constructor(key: string) {
    super(`blob not found: ${key}`);
    this.name = 'BlobNotFound';
  }
}

/**
 * Runs inside a digest thread of digest-thread.ts: digests (MD5, SHA-256 or both) of local
 * files, fed with byte ranges the main thread has just written (read back from the page cache
 * here), or of bytes that pass through memory only (an S3 upload's), handed over in shared
 * memory (streamed-digest.ts). A node has two (digest-threads.ts): a large blob's MD5 runs in one
 * and its SHA-256 in the other, at once, neither on the core receiving the bytes; a small file's
 * both come from one read in either, in one request (`digestFile`). One digest per `digest` name,
 * kept until `finish` or `forget`; ranges of one digest are hashed in the order they are sent
 * (messages arrive in order).
 * Reads are synchronous on purpose: this thread does nothing else, and one reused buffer keeps its
 * memory flat (no 1 GiB of short-lived read buffers for a garbage collector to chase).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import { parentPort } from 'node:worker_threads';
import type { DigestAlgorithm } from './digest.js';

export type DigestRequest =
  | { op: 'hash'; id: number; digest: number; algorithms: readonly DigestAlgorithm[]; file: string; start: number; length: number }
  /** `bytes` is a view of a SharedArrayBuffer: the main thread leaves it alone until the reply. */
  | { op: 'hashBytes'; id: number; digest: number; algorithms: readonly DigestAlgorithm[]; bytes: Uint8Array }
  | { op: 'finish'; id: number; digest: number; algorithms: readonly DigestAlgorithm[] }
  | { op: 'forget'; digest: number }
  /** A small file's digests in one request: nothing is kept here. */
  | { op: 'digestFile'; id: number; algorithms: readonly DigestAlgorithm[]; file: string; start: number; length: number };

/** `hex`: a finished digest's values, in the order of its algorithms. */
export type DigestReply = { id: number; ok: true; hex?: string[] } | { id: number; ok: false; message: string };

const READ_BYTES = 1024 * 1024;
const buffer = Buffer.allocUnsafeSlow(READ_BYTES);
/** null: a digest that failed part-way, refused until forgotten (a later range alone would hash wrong). */
const digests = new Map<number, crypto.Hash[] | null>();

function digestOf(name: number, algorithms: readonly DigestAlgorithm[]): crypto.Hash[] {
  let d = digests.get(name);
  if (d === null) throw new Error('this digest failed earlier');
  if (d === undefined) {
    d = algorithms.map((a) => crypto.createHash(a));
    digests.set(name, d);
  }
  return d;
}

function update(into: crypto.Hash[], bytes: Uint8Array): void {
  for (const h of into) h.update(bytes);
}

/** Hashes `length` bytes of `file` from `start`; a file shorter than that is an error. */
function hashRange(into: crypto.Hash[], file: string, start: number, length: number): void {
  const fd = fs.openSync(file, 'r');
  try {
    let done = 0;
    while (done < length) {
      const n = fs.readSync(fd, buffer, 0, Math.min(READ_BYTES, length - done), start + done);
      if (n === 0) throw new Error(`short read hashing ${file}`);
      update(into, buffer.subarray(0, n));
      done += n;
    }
  } finally {
    fs.closeSync(fd);
  }
}

function handle(req: DigestRequest): DigestReply | null {
  if (req.op === 'forget') {
    digests.delete(req.digest);
    return null;
  }
  if (req.op === 'digestFile') return digestFile(req);
  try {
    const d = digestOf(req.digest, req.algorithms);
    if (req.op === 'hash') {
      hashRange(d, req.file, req.start, req.length);
      return { id: req.id, ok: true };
    }
    if (req.op === 'hashBytes') {
      update(d, req.bytes);
      return { id: req.id, ok: true };
    }
    digests.delete(req.digest);
    return { id: req.id, ok: true, hex: d.map((h) => h.digest('hex')) };
  } catch (err) {
    // A digest that failed part-way is useless (the caller falls back to a full read).
    digests.set(req.digest, null);
    return { id: req.id, ok: false, message: (err as Error).message };
  }
}

function digestFile(req: DigestRequest & { op: 'digestFile' }): DigestReply {
  try {
    const hashes = req.algorithms.map((a) => crypto.createHash(a));
    hashRange(hashes, req.file, req.start, req.length);
    return { id: req.id, ok: true, hex: hashes.map((h) => h.digest('hex')) };
  } catch (err) {
    return { id: req.id, ok: false, message: (err as Error).message };
  }
}

parentPort?.on('message', (req: DigestRequest) => {
  const reply = handle(req);
  if (reply) parentPort?.postMessage(reply);
});

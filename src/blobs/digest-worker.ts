/**
 * Runs inside the digest thread of digest-thread.ts: the whole-file MD5 and SHA-256 of multipart
 * uploads (MD5 alone for a large direct body, whose SHA-256 the main thread computes), fed with
 * byte ranges of files the main thread has just written (read back from the page cache here). MD5
 * costs about 1.5 s of one core per GiB here, SHA-256 0.6 s; it runs on another core than the one
 * receiving the bytes. One digest per `digest` name, kept until `finish` or `forget`; ranges of one
 * digest are hashed in the order they are sent (messages arrive in order).
 * Reads are synchronous on purpose: this thread does nothing else, and one reused buffer keeps its
 * memory flat (no 1 GiB of short-lived read buffers for a garbage collector to chase).
 */
import fs from 'node:fs';
import { parentPort } from 'node:worker_threads';
import { DigestStream, Md5Stream, type DigestAlgorithms } from './digest.js';

export type DigestRequest =
  | { op: 'hash'; id: number; digest: number; algorithms: DigestAlgorithms; file: string; start: number; length: number }
  | { op: 'finish'; id: number; digest: number; algorithms: DigestAlgorithms }
  | { op: 'forget'; digest: number };

export type DigestReply =
  | { id: number; ok: true; md5?: string; sha256?: string }
  | { id: number; ok: false; message: string };

const READ_BYTES = 1024 * 1024;
const buffer = Buffer.allocUnsafeSlow(READ_BYTES);
/** null: a digest that failed part-way, refused until forgotten (a later range alone would hash wrong). */
const digests = new Map<number, DigestStream | Md5Stream | null>();

function digestOf(name: number, algorithms: DigestAlgorithms): DigestStream | Md5Stream {
  let d = digests.get(name);
  if (d === null) throw new Error('this digest failed earlier');
  if (d === undefined) {
    d = algorithms === 'md5' ? new Md5Stream() : new DigestStream();
    digests.set(name, d);
  }
  return d;
}

/** Hashes `length` bytes of `file` from `start`; a file shorter than that is an error. */
function hashRange(into: DigestStream | Md5Stream, file: string, start: number, length: number): void {
  const fd = fs.openSync(file, 'r');
  try {
    let done = 0;
    while (done < length) {
      const n = fs.readSync(fd, buffer, 0, Math.min(READ_BYTES, length - done), start + done);
      if (n === 0) throw new Error(`short read hashing ${file}`);
      into.update(buffer.subarray(0, n));
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
  try {
    if (req.op === 'hash') {
      hashRange(digestOf(req.digest, req.algorithms), req.file, req.start, req.length);
      return { id: req.id, ok: true };
    }
    const d = digestOf(req.digest, req.algorithms);
    digests.delete(req.digest);
    return { id: req.id, ok: true, ...d.digest() };
  } catch (err) {
    // A digest that failed part-way is useless (the caller falls back to a full read).
    digests.set(req.digest, null);
    return { id: req.id, ok: false, message: (err as Error).message };
  }
}

parentPort?.on('message', (req: DigestRequest) => {
  const reply = handle(req);
  if (reply) parentPort?.postMessage(reply);
});

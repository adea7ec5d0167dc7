/**
 * The additional checksums S3 clients send with a body (`x-amz-checksum-<algorithm>`, as a header or
 * an aws-chunked trailer), checked against the bytes as they stream. CRC32, SHA-1 and SHA-256 are
 * checked; an algorithm node has no implementation of (CRC32C, CRC64NVME) is accepted unchecked,
 * as the MD5 and SHA-256 the store computes still guard the bytes (Content-MD5, the payload hash).
 */
import crypto from 'node:crypto';
import zlib from 'node:zlib';
import { s3Error } from '../http/s3/errors.js';

export interface RunningChecksum {
  /** The header naming it: `x-amz-checksum-crc32`. */
  readonly header: string;
  update(chunk: Buffer): void;
  /** Base64 of the digest, as the header carries it. */
  digest(): string;
}

class Crc32 implements RunningChecksum {
  private value = 0;
  constructor(readonly header: string) {}
  update(chunk: Buffer): void {
    this.value = zlib.crc32(chunk, this.value);
  }
  digest(): string {
    const out = Buffer.alloc(4);
    out.writeUInt32BE(this.value >>> 0);
    return out.toString('base64');
  }
}

class Hashed implements RunningChecksum {
  private readonly hash: crypto.Hash;
  constructor(readonly header: string, algorithm: string) {
    this.hash = crypto.createHash(algorithm);
  }
  update(chunk: Buffer): void {
    this.hash.update(chunk);
  }
  digest(): string {
    return this.hash.digest('base64');
  }
}

/** A running checksum for the header `name` (lower case), or null when it is not one node computes. */
export function runningChecksum(name: string): RunningChecksum | null {
  if (name === 'x-amz-checksum-crc32') return new Crc32(name);
  if (name === 'x-amz-checksum-sha1') return new Hashed(name, 'sha1');
  if (name === 'x-amz-checksum-sha256') return new Hashed(name, 'sha256');
  return null;
}

export function checkChecksum(sum: RunningChecksum, expected: string): void {
  if (sum.digest() !== expected.trim()) throw s3Error(400, 'BadDigest', `The ${sum.header.slice('x-amz-checksum-'.length).toUpperCase()} you specified did not match the calculated checksum.`);
}

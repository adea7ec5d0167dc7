/**
 * Processed CDN results shared by every node through object storage, with a short Redis lock so
 * the same render is not run by every node at once. Each node keeps its own memory/disk cache in
 * front (src/delivery/result-cache.ts); this is the tier behind it, used only when blobs live in
 * object storage (with a shared data dir the disk cache is already shared).
 *
 * Objects: `cache/<k0k1>/<key>` = 4-byte big-endian meta length, meta JSON, body (the disk
 * cache's layout). Expire them with a bucket lifecycle rule on the `cache/` prefix.
 */
import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { BlobStore } from '../blobs/store.js';

export interface SharedResult<M> {
  meta: M;
  body: Buffer;
  /** True when another node produced it. */
  remote?: boolean;
}

/** How long a render lock lives if its holder dies; waiters give up and render themselves after it. */
const LOCK_MS = 30_000;
const POLL_MS = 100;
const MAX_SHARED_BYTES = 64 * 1024 * 1024;

const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;

export class SharedResults<M> {
  constructor(
    private readonly blobs: BlobStore,
    private readonly redis: Redis | null,
    private readonly lockPrefix: string,
    private readonly log: Logger,
  ) {}

  static key(key: string): string {
    return `cache/${key.slice(0, 2)}/${key}`;
  }

  /** The stored result, or what `produce` makes (once across nodes while the lock holds). */
  async get(key: string, produce: () => Promise<SharedResult<M>>): Promise<SharedResult<M>> {
    const found = await this.read(key);
    if (found) return found;
    if (!this.redis) return this.produceAndShare(key, produce);
    const token = crypto.randomBytes(12).toString('hex');
    const lock = `${this.lockPrefix}render:${key}`;
    const deadline = Date.now() + LOCK_MS;
    for (;;) {
      const got = await this.redis.set(lock, token, 'PX', LOCK_MS, 'NX').catch(() => 'ERR');
      if (got === 'OK' || got === 'ERR') {
        // Holding the lock (or Redis is away: render here rather than fail the request).
        try {
          // Another node may have finished between our read and the lock.
          return (got === 'OK' && (await this.read(key))) || (await this.produceAndShare(key, produce));
        } finally {
          if (got === 'OK') await this.redis.eval(RELEASE, 1, lock, token).catch(() => undefined);
        }
      }
      await new Promise((r) => setTimeout(r, POLL_MS));
      const done = await this.read(key);
      if (done) return done;
      if (Date.now() > deadline) return this.produceAndShare(key, produce);
    }
  }

  private async produceAndShare(key: string, produce: () => Promise<SharedResult<M>>): Promise<SharedResult<M>> {
    const r = await produce();
    if (r.body.length <= MAX_SHARED_BYTES) {
      const meta = Buffer.from(JSON.stringify(r.meta));
      const len = Buffer.alloc(4);
      len.writeUInt32BE(meta.length);
      const blob = Buffer.concat([len, meta, r.body]);
      await this.blobs
        .put(SharedResults.key(key), Readable.from([blob]), { maxBytes: blob.length, onTooLarge: () => new Error('result grew') })
        .catch((err: unknown) => this.log.warn({ err, key }, 'could not share CDN result'));
    }
    return r;
  }

  private async read(key: string): Promise<SharedResult<M> | null> {
    try {
      const chunks: Buffer[] = [];
      for await (const c of await this.blobs.get(SharedResults.key(key))) chunks.push(c as Buffer);
      const buf = Buffer.concat(chunks);
      const n = buf.length >= 4 ? buf.readUInt32BE(0) : -1;
      if (n < 2 || 4 + n > buf.length) return null;
      return { meta: JSON.parse(buf.toString('utf8', 4, 4 + n)) as M, body: buf.subarray(4 + n), remote: true };
    } catch {
      // Missing (the usual case) or unreadable: render.
      return null;
    }
  }
}

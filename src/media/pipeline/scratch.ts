/**
 * The scratch files of one render: large intermediate images as libvips `.v` files, so their
 * pixels live in libvips' threads and the page cache, never in a main-thread buffer (pixel-file.ts).
 * They go in the directory the render is given (the data dir's temporary area, swept after a
 * crash: blobs/), named by this render, and every one is removed when the render ends, whatever
 * the outcome (render.ts calls `dispose` once the work has stopped).
 */
import crypto from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';

export class Scratch {
  private readonly prefix = `render-${crypto.randomBytes(6).toString('hex')}`;
  private readonly live = new Set<string>();
  private count = 0;
  private made: Promise<unknown> | null = null;

  constructor(private readonly dir: string) {}

  /** A new file path for a `.v` image (the extension picks libvips' own format); the directory exists. */
  async file(): Promise<string> {
    await (this.made ??= mkdir(this.dir, { recursive: true }));
    const p = path.join(this.dir, `${this.prefix}-${this.count++}.v`);
    this.live.add(p);
    return p;
  }

  /** Removes a file nothing reads any more (libvips keeps none open: see delivery/feature.ts). */
  async remove(p: string): Promise<void> {
    this.live.delete(p);
    await rm(p, { force: true });
  }

  /** Removes every file still there. */
  async dispose(): Promise<void> {
    await Promise.all([...this.live].map((p) => this.remove(p).catch(() => undefined)));
  }
}

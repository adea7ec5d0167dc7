/**
 * A file streamed from a source that fails at once is not left behind (src/blobs/new-file.ts): the
 * write stream opens its file asynchronously, after the failure, so removing it right away used to
 * remove nothing. Found by the Upload API fuzzer as empty `.part` files in the blob store's temp dir.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable, Transform, Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { pipeInto, streamToNewFile } from '../../src/blobs/new-file.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-new-file-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const brokenSource = () => {
  const s = new Readable({ read() {} });
  s.destroy(new Error('client went away'));
  return s;
};

describe('streamToNewFile', () => {
  it('a source already broken: rejects, and no file exists afterwards (50 tries)', async () => {
    for (let i = 0; i < 50; i++) {
      const file = path.join(dir, `broken-${i}.part`);
      await expect(streamToNewFile(file, brokenSource(), [new Transform({ transform: (c, _e, done) => done(null, c) })], { flush: true })).rejects.toThrow(/client went away/);
      expect(fs.existsSync(file), `try ${i}`).toBe(false);
    }
    // Nothing appears later either (a late open would create the file after the rejection).
    await new Promise((r) => setTimeout(r, 100));
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('a source already broken and no transform (one source piped): rejects, no file afterwards', async () => {
    for (let i = 0; i < 20; i++) {
      const file = path.join(dir, `broken-alone-${i}.part`);
      await expect(streamToNewFile(file, brokenSource(), [], { flush: true })).rejects.toThrow(/client went away/);
      expect(fs.existsSync(file), `try ${i}`).toBe(false);
    }
    await new Promise((r) => setTimeout(r, 100));
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('a source failing midway: rejects and removes what was written', async () => {
    const file = path.join(dir, 'midway.part');
    const source = new Readable({
      read() {
        this.push(Buffer.alloc(64 * 1024, 1));
        setTimeout(() => this.destroy(new Error('cut')), 20);
      },
    });
    await expect(streamToNewFile(file, source, [])).rejects.toThrow(/cut/);
    expect(fs.existsSync(file)).toBe(false);
  });

  it('a good source: the file holds its bytes', async () => {
    const file = path.join(dir, 'good.bin');
    await streamToNewFile(file, Readable.from([Buffer.from('hello '), Buffer.from('world')]), [], { flush: true, mode: 0o600 });
    expect(fs.readFileSync(file, 'utf8')).toBe('hello world');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    fs.rmSync(file);
  });
});

describe('pipeInto (pipeline of one source and a sink)', () => {
  const endless = () => new Readable({ read() { this.push(Buffer.alloc(1024)); } });

  it('a sink that fails: rejects with its error and destroys the source', async () => {
    const source = endless();
    const sink = new Writable({ write: (_c, _e, done) => done(new Error('disk full')) });
    await expect(pipeInto(source, sink)).rejects.toThrow(/disk full/);
    expect(source.destroyed).toBe(true);
  });

  it('a sink closed early: rejects and destroys the source', async () => {
    const source = endless();
    const sink = new Writable({ write: (_c, _e, done) => setTimeout(done, 5) });
    setTimeout(() => sink.destroy(), 20);
    await expect(pipeInto(source, sink)).rejects.toThrow(/premature close/i);
    expect(source.destroyed).toBe(true);
  });

  it('a source that fails: rejects with its error and destroys the sink', async () => {
    const source = new Readable({ read() { setTimeout(() => this.destroy(new Error('reset')), 5); } });
    const sink = new Writable({ write: (_c, _e, done) => done() });
    await expect(pipeInto(source, sink)).rejects.toThrow(/reset/);
    expect(sink.destroyed).toBe(true);
  });

  it('resolves only once the sink has closed (after its final step)', async () => {
    const order: string[] = [];
    const sink = new Writable({
      write: (_c, _e, done) => done(),
      final: (done) => setTimeout(() => (order.push('final'), done()), 10),
      destroy: (err, done) => setTimeout(() => (order.push('closed'), done(err)), 10),
    });
    await pipeInto(Readable.from([Buffer.from('a'), Buffer.from('b')]), sink);
    order.push('resolved');
    expect(order).toEqual(['final', 'closed', 'resolved']);
  });
});

/**
 * A large body written to disk does not leave its written chunks waiting for V8 (src/writes/spent-chunks.ts).
 * node:http hands each body chunk over as its own 64 KiB buffer; before, the dead ones were freed
 * only when their total reached V8's external-memory limit (about 64 MiB), and the main malloc
 * arena kept that as resident memory for good (a 1 GiB upload's peak RSS 164-172 MB against an
 * idle 113-122 MB). Measured here as the buffers alive (`arrayBuffers`) while 96 MiB go through the
 * real writer into a real file: bytes, not time.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { afterAll, describe, expect, it } from 'vitest';
import { BatchedFileWriter } from '../../src/writes/batched-file-writer.js';

const MiB = 1024 * 1024;
const CHUNK = 64 * 1024;
const TOTAL = 96 * MiB;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-spent-chunks-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('chunks written by BatchedFileWriter', () => {
  it('are freed a few MiB behind the writes, not at V8\'s external-memory limit (96 MiB body)', async () => {
    const pattern = crypto.randomBytes(CHUNK);
    let sent = 0;
    let peakAlive = 0;
    const before = process.memoryUsage().arrayBuffers;
    // A fresh buffer per chunk, as node:http gives a request body.
    const body = new Readable({
      read() {
        peakAlive = Math.max(peakAlive, process.memoryUsage().arrayBuffers - before);
        if (sent >= TOTAL) return this.push(null);
        const chunk = Buffer.allocUnsafeSlow(CHUNK);
        pattern.copy(chunk);
        sent += CHUNK;
        this.push(chunk);
      },
    });
    const file = path.join(dir, 'body.bin');
    const writer = new BatchedFileWriter(file, { flags: 'wx', start: 0, maxBytes: TOTAL, onTooLarge: () => new Error('too large') });
    await pipeline(body, writer);
    expect(writer.size).toBe(TOTAL);
    expect(fs.statSync(file).size).toBe(TOTAL);
    console.log(`spent chunks: at most ${(peakAlive / MiB).toFixed(1)} MiB of buffers alive`);
    // Before: 34 MiB here (V8 collected at its external-memory limit); after: a few MiB.
    expect(peakAlive).toBeLessThan(20 * MiB);
  });

  it('are not scavenged on purpose when V8 collected on its own meanwhile (many small bodies, each with its garbage)', async () => {
    const forced: number[] = [];
    let byV8 = 0;
    const observer = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) {
        const flags = (entry as { detail?: { flags?: number } }).detail?.flags ?? 0;
        if (flags & constants.NODE_PERFORMANCE_GC_FLAGS_FORCED) forced.push(entry.startTime);
        else byV8++;
      }
    });
    observer.observe({ entryTypes: ['gc'] });
    try {
      // 96 bodies of 64 KiB: three times the bytes between two scavenges on purpose.
      for (let i = 0; i < 96; i++) {
        // What a request allocates besides its body, and more: V8 collects the young generation on its own.
        let garbage: unknown[] = [];
        for (let j = 0; j < 20_000; j++) garbage.push({ j, s: `object ${j}` });
        garbage = [];
        await new Promise((resolve) => setImmediate(resolve));
        const writer = new BatchedFileWriter(path.join(dir, `small-${i}.bin`), { flags: 'wx', start: 0, maxBytes: CHUNK, onTooLarge: () => new Error('too large') });
        await pipeline(Readable.from([crypto.randomBytes(CHUNK)]), writer);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    } finally {
      observer.disconnect();
    }
    expect(byV8).toBeGreaterThan(3);
    expect(forced).toEqual([]);
  });
});

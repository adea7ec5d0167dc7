/**
 * A digest thread holds its process while a request waits for its answer, and only then: a CLI
 * command (`stowage import` writes files, so it digests them) neither ends before its digest nor
 * lives on after its work until the thread's idle timer ends it 30 s later. The thread runs in a
 * child process from the build, which reports what still holds its event loop.
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { ROOT } from '../helpers/server.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-digest-exit-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

it('a digest completes with nothing else holding the event loop, and after it nothing of the thread does', () => {
  const file = path.join(dir, 'body.bin');
  fs.writeFileSync(file, 'some bytes to digest\n');
  const script = `
    import { DigestThread } from ${JSON.stringify(path.join(ROOT, 'dist', 'digests', 'digest-thread.js'))};
    // Nothing else holds the loop while the digest runs (as in a CLI command on SQLite): the
    // request must, or the process ends first (exit code 13, an unsettled top-level await).
    const hex = await new DigestThread().digestFile(process.argv[2], 0, ${fs.statSync(file).size}, ['md5']);
    setImmediate(() => process.stdout.write(JSON.stringify({ hex, holding: process.getActiveResourcesInfo() })));
  `;
  const command = path.join(dir, 'command.mjs');
  fs.writeFileSync(command, script);
  const out = JSON.parse(execFileSync(process.execPath, [command, file], { encoding: 'utf8', timeout: 60_000 })) as { hex: string[]; holding: string[] };
  expect(out.hex).toEqual([crypto.createHash('md5').update(fs.readFileSync(file)).digest('hex')]);
  expect(out.holding.filter((r) => r !== 'Immediate' && r !== 'TTYWrap' && r !== 'PipeWrap')).toEqual([]);
});

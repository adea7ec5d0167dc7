/**
 * A digest thread never keeps its process alive: a finished CLI command (`stowage import` writes
 * files, so it digests them) exits at once, not when the thread's idle timer ends 30 s later. The
 * thread runs in a child process from the build, which reports what still holds its event loop.
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

it('after a digest, nothing of the thread holds the event loop', () => {
  const file = path.join(dir, 'body.bin');
  fs.writeFileSync(file, 'some bytes to digest\n');
  const script = `
    import { DigestThread } from ${JSON.stringify(path.join(ROOT, 'dist', 'digests', 'digest-thread.js'))};
    // The command's own work holds the loop while it waits (here a timer): the thread itself never does.
    const working = setInterval(() => undefined, 1000);
    const hex = await new DigestThread().digestFile(process.argv[2], 0, ${fs.statSync(file).size}, ['md5']);
    clearInterval(working);
    setImmediate(() => process.stdout.write(JSON.stringify({ hex, holding: process.getActiveResourcesInfo() })));
  `;
  const command = path.join(dir, 'command.mjs');
  fs.writeFileSync(command, script);
  const out = JSON.parse(execFileSync(process.execPath, [command, file], { encoding: 'utf8', timeout: 60_000 })) as { hex: string[]; holding: string[] };
  expect(out.hex).toEqual([crypto.createHash('md5').update(fs.readFileSync(file)).digest('hex')]);
  expect(out.holding.filter((r) => r !== 'Immediate' && r !== 'TTYWrap' && r !== 'PipeWrap')).toEqual([]);
});

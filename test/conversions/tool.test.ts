/**
 * How a conversion tool runs (src/conversions/tool.ts, src/launcher/sandbox.ts): confined (no
 * network, no file but its own), bounded in memory, and how its end is classified: a clean
 * non-zero exit is the tool refusing the input; dying of a signal or aborting (exit 128 and up) is a
 * crash, which the document conversion tries once more (LibreOffice aborts now and then while it
 * starts). Real tools (sh, ffmpeg) under real bubblewrap.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runTool, ToolError } from '../../src/conversions/tool.js';
import { DEFAULT_TOOL_POLICY, setToolPolicy } from '../../src/launcher/sandbox.js';

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-tool-test-'));
const access = { read: [], write: [work] };
const sh = (script: string, timeoutMs = 10_000) => runTool('sh', ['-c', script], { timeoutMs, access, what: 'sh' });
const endOf = (script: string) => sh(script).then(() => null, (err: unknown) => err as ToolError);

let requests = 0;
const listener = http.createServer((_req, res) => {
  requests++;
  res.end('SECRET-FROM-LISTENER');
});
let port = 0;

beforeAll(async () => {
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  port = (listener.address() as { port: number }).port;
});
afterAll(() => {
  listener.close();
  fs.rmSync(work, { recursive: true, force: true });
});
afterEach(() => setToolPolicy(DEFAULT_TOOL_POLICY));

describe('runTool', () => {
  it('a clean exit 0 resolves with the output', async () => {
    await expect(sh('echo hello')).resolves.toMatchObject({ stdout: 'hello\n' });
  });

  it('exit 1 is a refusal, not a crash', async () => {
    const err = await endOf('echo "bad input" >&2; exit 1');
    expect(err).toBeInstanceOf(ToolError);
    expect(err).toMatchObject({ inputFault: true, crashed: false });
    expect(err?.message).toMatch(/exit 1.*bad input/);
  });

  it('an abort (SIGABRT) and exit 134 are crashes', async () => {
    expect(await endOf('kill -ABRT $$')).toMatchObject({ crashed: true });
    expect(await endOf('exit 134')).toMatchObject({ crashed: true });
  });

  it('a tool stopped at its time limit is not a crash', async () => {
    const err = await sh('sleep 5', 200).then(() => null, (e: unknown) => e as ToolError);
    expect(err).toMatchObject({ crashed: false });
    expect(err?.message).toMatch(/time limit/);
  });

  it('a program that is not installed is our fault, not the input\'s', async () => {
    const err = await runTool('no-such-converter', [], { timeoutMs: 10_000, access, what: 'converter' }).then(() => null, (e: unknown) => e as ToolError);
    expect(err).toMatchObject({ inputFault: false });
    expect(err?.message).toMatch(/could not be started.*not installed/);
  });
});

describe('the tool sandbox', () => {
  it('sees its work folder and the system, not /etc/passwd, the home or the network', async () => {
    fs.writeFileSync(path.join(work, 'input.txt'), 'mine');
    const probe = [
      'cat input.txt && echo', 'echo written > out.txt && echo wrote-work',
      'cat /etc/passwd 2>/dev/null || echo no-passwd', `ls ${os.homedir()} 2>/dev/null || echo no-home`,
      'echo x > /usr/x 2>/dev/null || echo usr-read-only', 'ls /usr/bin/ffmpeg >/dev/null && echo has-usr',
    ].join('; ');
    const { stdout } = await sh(probe);
    expect(stdout.split('\n').filter(Boolean)).toEqual(['mine', 'wrote-work', 'no-passwd', 'no-home', 'usr-read-only', 'has-usr']);
    expect(fs.readFileSync(path.join(work, 'out.txt'), 'utf8')).toBe('written\n');
    // ffmpeg asked for a loopback URL (whitelisted on purpose here) reaches nothing.
    const before = requests;
    const err = await runTool('ffmpeg', ['-hide_banner', '-nostdin', '-i', `http://127.0.0.1:${port}/x.ts`, '-f', 'null', '-'], { timeoutMs: 20_000, access, what: 'ffmpeg' }).then(() => null, (e: unknown) => e as ToolError);
    expect(err?.message).toMatch(/ffmpeg failed/);
    expect(requests - before).toBe(0);
  });

  it('the same probe unconfined (STOWAGE_TOOL_SANDBOX=off) reaches both: the test sees what the sandbox stops', async () => {
    setToolPolicy({ ...DEFAULT_TOOL_POLICY, sandbox: 'off' });
    const { stdout } = await sh('head -c 4 /etc/passwd');
    expect(stdout).toMatch(/^\w/);
    const before = requests;
    await runTool('ffmpeg', ['-hide_banner', '-nostdin', '-i', `http://127.0.0.1:${port}/x.ts`, '-f', 'null', '-'], { timeoutMs: 20_000, access, what: 'ffmpeg' }).catch(() => null);
    expect(requests - before).toBeGreaterThan(0);
  });

  it('a process past the memory bound is killed with its group, with a clear reason', async () => {
    setToolPolicy({ ...DEFAULT_TOOL_POLICY, memoryBytes: 96 * 1024 ** 2 });
    // tail keeps every byte of a line that never ends: 1 MB more every 50 ms, as a converter
    // laying out a zip bomb grows.
    const err = await endOf('while :; do head -c 1000000 /dev/zero; sleep 0.05; done | tail');
    expect(err).toMatchObject({ inputFault: true, crashed: false });
    expect(err?.message).toBe('sh was stopped: it needed more than its memory bound of 96 MiB.');
    // Well under the bound runs as usual.
    await expect(sh('x=$(head -c 1000000 /dev/zero | tr "\\0" a); echo ${#x}')).resolves.toMatchObject({ stdout: '1000000\n' });
  });

  it('refuses to start a tool unconfined when bubblewrap cannot run', async () => {
    const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-no-bwrap-'));
    const savedPath = process.env['PATH'];
    fs.symlinkSync('/usr/bin/prlimit', path.join(bin, 'prlimit'));
    try {
      // A node without bwrap on its PATH; the policy is set anew so the sandbox is probed again.
      process.env['PATH'] = bin;
      setToolPolicy({ ...DEFAULT_TOOL_POLICY, sandbox: 'off' });
      setToolPolicy(DEFAULT_TOOL_POLICY);
      const err = await endOf('echo ran');
      expect(err).toMatchObject({ inputFault: false });
      expect(err?.message).toMatch(/^sh was not started: the tool sandbox \(bubblewrap\) is not available on this node: bwrap is not installed; .*STOWAGE_TOOL_SANDBOX=off/);
    } finally {
      process.env['PATH'] = savedPath;
      setToolPolicy({ ...DEFAULT_TOOL_POLICY, sandbox: 'off' });
      fs.rmSync(bin, { recursive: true, force: true });
    }
  });
});

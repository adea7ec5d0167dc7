/**
 * The launcher (src/launcher/): tools started by a helper process instead of a fork of the
 * server. These run the real helper from this test process: input and output relayed, exit codes
 * and signals reported, process groups killed whole, output capped, and no tool left running when
 * the helper or the process that launched it dies.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compiledSibling } from '../../src/core/compiled-path.js';
import { launch, launcherPid, startLauncher } from '../../src/launcher/launch.js';

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Polls until `pid` is gone (zombies of a dead parent are reaped by init quickly) or `ms` passed. */
async function goneWithin(pid: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (!alive(pid) || /^State:\s+Z/m.test(fs.readFileSync(`/proc/${pid}/status`, { encoding: 'utf8', flag: 'r' }).toString())) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return !alive(pid);
}

/** Reads lines a launched shell prints until `count` have arrived. */
function linesOf(count: number): { onStdout: (d: Buffer) => void; lines: Promise<string[]> } {
  let text = '';
  let done: (l: string[]) => void = () => undefined;
  const lines = new Promise<string[]>((r) => (done = r));
  return {
    onStdout: (d) => {
      text += d.toString();
      const all = text.split('\n').filter(Boolean);
      if (all.length >= count) done(all);
    },
    lines,
  };
}

describe('launcher', () => {
  it('relays stdin, stdout and stderr and reports the exit code', async () => {
    let out = '';
    let err = '';
    const input = Buffer.alloc(3 * 1024 * 1024 + 17, 'x'); // over several of the helper's stdin pieces
    const run = launch('sh', ['-c', 'wc -c; echo oops >&2; exit 3'], { stdin: input, onStdout: (d) => (out += d), onStderr: (d) => (err += d) });
    expect(await run.exited).toEqual({ started: true, code: 3, signal: null, overMemory: false, peakRssBytes: 0 });
    expect(out.trim()).toBe(String(input.length));
    expect(err).toBe('oops\n');
  });

  it('passes cwd and env, and binary output through unchanged', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-launch-'));
    const chunks: Buffer[] = [];
    const run = launch('sh', ['-c', 'printf "$PWD|$ONLY_HERE|"; head -c 300000 /dev/urandom | tee blob'], { cwd: dir, env: { PATH: process.env['PATH'], ONLY_HERE: 'yes' }, onStdout: (d) => chunks.push(d) });
    expect(await run.exited).toMatchObject({ started: true, code: 0 });
    const out = Buffer.concat(chunks);
    const head = `${fs.realpathSync(dir)}|yes|`;
    expect(out.subarray(0, head.length).toString()).toBe(head);
    expect(out.subarray(head.length).equals(fs.readFileSync(path.join(dir, 'blob')))).toBe(true);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a program that does not exist is reported as not started', async () => {
    expect(await launch('stowage-no-such-program', []).exited).toMatchObject({ started: false, code: 'ENOENT' });
    expect(await launch('sh', ['-c', 'x\0y']).exited).toMatchObject({ started: false });
  });

  it('relays messages both ways with a Node child that has an IPC channel, and its pid', async () => {
    const echo = "process.on('message', (m) => process.send({ back: m, bytes: Buffer.isBuffer(m.data) || m.data instanceof Uint8Array }))";
    const got: unknown[] = [];
    let answered: () => void = () => undefined;
    const first = new Promise<void>((r) => (answered = r));
    const run = launch(process.execPath, ['-e', echo], { onMessage: (m) => { got.push(m); answered(); } });
    run.send({ n: 1, data: Buffer.from('abc') });
    await first;
    expect(run.pid).toBeGreaterThan(0);
    expect(fs.readFileSync(`/proc/${run.pid}/cmdline`, 'utf8')).toContain('process.send');
    run.kill();
    await run.exited;
    expect(got).toHaveLength(1);
    expect((got[0] as { back: { n: number; data: Uint8Array }; bytes: boolean }).back.n).toBe(1);
    expect(Buffer.from((got[0] as { back: { data: Uint8Array } }).back.data).toString()).toBe('abc');
    expect((got[0] as { bytes: boolean }).bytes).toBe(true);
  });

  it('caps the output it delivers', async () => {
    let n = 0;
    const run = launch('head', ['-c', '5000000', '/dev/zero'], { onStdout: (d) => (n += d.length), maxOutputBytes: 1_000_000 });
    expect(await run.exited).toEqual({ started: true, code: 0, signal: null, overMemory: false, peakRssBytes: 0 });
    expect(n).toBe(1_000_000);
  });

  it('kill() signals the child; with group, its whole group, also the stragglers after a normal exit', async () => {
    const single = launch('sleep', ['30']);
    single.kill('SIGTERM');
    expect(await single.exited).toEqual({ started: true, code: null, signal: 'SIGTERM', overMemory: false, peakRssBytes: 0 });

    const killed = linesOf(1);
    const group = launch('sh', ['-c', 'sleep 30 & echo $!; wait'], { group: true, onStdout: killed.onStdout });
    const [inner] = (await killed.lines).map(Number);
    group.kill();
    expect(await group.exited).toMatchObject({ started: true, signal: 'SIGKILL' });
    expect(await goneWithin(inner!, 5_000)).toBe(true);

    const left = linesOf(1);
    const leader = launch('sh', ['-c', 'sleep 30 & echo $!'], { group: true, onStdout: left.onStdout });
    expect(await leader.exited).toEqual({ started: true, code: 0, signal: null, overMemory: false, peakRssBytes: 0 });
    const [straggler] = (await left.lines).map(Number);
    expect(await goneWithin(straggler!, 5_000)).toBe(true);
  });

  it('when the helper dies, its runs end as not started, their children are killed, and the next launch starts a new helper', async () => {
    startLauncher();
    const helper = launcherPid()!;
    expect(helper).toBeGreaterThan(0);
    const started = linesOf(1);
    const run = launch('sh', ['-c', 'echo $$; exec sleep 30'], { onStdout: started.onStdout });
    const [child] = (await started.lines).map(Number);
    process.kill(helper, 'SIGKILL');
    expect(await run.exited).toMatchObject({ started: false, code: 'ELAUNCHER' });
    expect(await goneWithin(child!, 5_000)).toBe(true);
    let out = '';
    expect(await launch('echo', ['again'], { onStdout: (d) => (out += d) }).exited).toMatchObject({ started: true, code: 0 });
    expect(out).toBe('again\n');
    expect(launcherPid()).not.toBe(helper);
  });

  it('when the process that launched a tool is killed, the helper kills the tool and exits', async () => {
    // A separate Node process launches `sleep` and prints both pids; then it is SIGKILLed.
    const script = `import('${compiledSibling(import.meta.url.replace('/test/launcher/', '/src/launcher/'), './launch.js')}').then(({ launch, launcherPid }) => {
      launch('sh', ['-c', 'echo $$; exec sleep 30'], { onStdout: (d) => process.stdout.write(launcherPid() + ' ' + d) });
    });`;
    const parent = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const line = await new Promise<string>((resolve) => parent.stdout.once('data', (d: Buffer) => resolve(d.toString().trim())));
    const [helper, tool] = line.split(' ').map(Number);
    expect(alive(tool!)).toBe(true);
    parent.kill('SIGKILL');
    expect(await goneWithin(tool!, 5_000)).toBe(true);
    expect(await goneWithin(helper!, 5_000)).toBe(true);
  });
});

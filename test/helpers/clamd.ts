/**
 * A real ClamAV daemon for tests, started per test file: `clamd --foreground` with a config and a
 * signature database the test writes (MD5 hash signatures, .hdb), so nothing is downloaded.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** The EICAR anti-virus test file (68 bytes). */
export const EICAR = Buffer.from('X5O!P%@AP[4\\PZX54(P^)7CC)7}$EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*', 'latin1');

export interface TestClamd {
  /** Unix socket path (STOWAGE_CLAMD_ADDRESS). */
  socket: string;
  child: ChildProcess;
  /** Freezes / resumes the daemon (SIGSTOP / SIGCONT): a scan in flight then hangs until resumed. */
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
}

/** Starts clamd knowing `signatures` (name -> the exact bytes it matches); resolves once it answers PING. */
export async function startClamd(signatures: Record<string, Buffer>): Promise<TestClamd> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-clamd-'));
  const db = path.join(dir, 'db');
  fs.mkdirSync(db);
  const lines = Object.entries(signatures).map(([name, bytes]) => `${crypto.createHash('md5').update(bytes).digest('hex')}:${bytes.length}:${name}`);
  fs.writeFileSync(path.join(db, 'stowage-test.hdb'), lines.join('\n') + '\n');
  const socket = path.join(dir, 'clamd.sock');
  const conf = path.join(dir, 'clamd.conf');
  fs.writeFileSync(conf, [`Foreground yes`, `LocalSocket ${socket}`, `DatabaseDirectory ${db}`, `TemporaryDirectory ${dir}`, `LogFile ${path.join(dir, 'clamd.log')}`, `SelfCheck 0`].join('\n') + '\n');
  const child = spawn('clamd', ['--foreground', `--config-file=${conf}`], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('error', (err) => (out += `spawn failed: ${err.message}`));
  const deadline = Date.now() + 30_000;
  while (!(await ping(socket))) {
    if (child.exitCode !== null || Date.now() > deadline || /spawn failed/.test(out)) {
      child.kill('SIGKILL');
      throw new Error(`clamd did not start:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    socket,
    child,
    pause: () => void child.kill('SIGSTOP'),
    resume: () => void child.kill('SIGCONT'),
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGCONT');
        child.kill('SIGTERM');
      }
      await exited;
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

function ping(socket: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createConnection({ path: socket });
    let reply = '';
    s.on('data', (d: Buffer) => (reply += d.toString()));
    s.once('connect', () => s.end('zPING\0'));
    s.once('error', () => resolve(false));
    s.once('close', () => resolve(reply.startsWith('PONG')));
    s.setTimeout(1000, () => s.destroy());
  });
}

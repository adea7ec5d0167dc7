/**
 * The launcher helper: a small process the server forks at start, while the server is still small,
 * that starts every tool child for it (ffprobe, ffmpeg, LibreOffice, poppler, the SVG rasterizer).
 * Why: Node starts a child with fork(), and the kernel copies the caller's page tables on the
 * calling thread, so a server holding 1.6 GB blocked its event loop about 60 ms per child it
 * started. Forking from this process costs a few milliseconds whatever the server's size, and on
 * a thread the server never waits on.
 *
 * It lives as long as its IPC channel: when the server goes (even by SIGKILL), the channel closes,
 * every child still running here is killed and the helper exits, so no tool outlives its node.
 * SIGINT and SIGTERM are ignored for the same reason: a Ctrl-C or a service manager signalling the
 * whole group must not stop tools of requests the server is still draining.
 */
import { spawn, type ChildProcess, type Serializable } from 'node:child_process';
import type { ChildMessage, FromHelper, KillRequest, LaunchRequest, OutputStream, StdinChunk, ToHelper } from './protocol.js';
import { RssWatch } from './rss-watch.js';

interface Running {
  child: ChildProcess;
  group: boolean;
  /** Terminal message sent (`failed` or `closed`): nothing more is said about this launch. */
  done: boolean;
}

const running = new Map<number, Running>();
const memory = new RssWatch();

function send(message: FromHelper): void {
  // After the server has gone there is nobody to tell.
  if (process.connected) process.send?.(message);
}

function signal(run: Running, sig: NodeJS.Signals): void {
  const pid = run.child.pid;
  if (pid === undefined) return;
  try {
    process.kill(run.group ? -pid : pid, sig);
  } catch {
    // Already gone.
  }
}

function relayOutput(id: number, child: ChildProcess, stream: OutputStream, maxBytes: number): void {
  let relayed = 0;
  child[stream]?.on('data', (chunk: Buffer) => {
    if (relayed >= maxBytes) return;
    const part = chunk.length > maxBytes - relayed ? chunk.subarray(0, maxBytes - relayed) : chunk;
    relayed += part.length;
    send({ type: 'output', id, stream, data: part });
  });
}

function output(req: LaunchRequest, stream: OutputStream): 'pipe' | 'inherit' | 'ignore' {
  if (req.relay.includes(stream)) return 'pipe';
  return req.inheritOutput ? 'inherit' : 'ignore';
}

function launch(req: LaunchRequest): void {
  let child: ChildProcess;
  try {
    child = spawn(req.cmd, req.args, {
      cwd: req.cwd,
      env: req.env,
      detached: req.group,
      stdio: [req.stdin ? 'pipe' : 'ignore', output(req, 'stdout'), output(req, 'stderr'), ...(req.ipc ? ['ipc' as const] : [])],
      serialization: 'advanced',
    });
  } catch (e) {
    // Arguments spawn() refuses before starting anything (a NUL byte in an argument, say).
    send({ type: 'failed', id: req.id, code: (e as NodeJS.ErrnoException).code ?? 'EINVAL', message: (e as Error).message });
    return;
  }
  const run: Running = { child, group: req.group, done: false };
  running.set(req.id, run);
  child.stdin?.on('error', () => undefined); // a child that exits before reading all of its input
  for (const stream of req.relay) relayOutput(req.id, child, stream, req.maxOutputBytes);
  if (req.ipc) child.on('message', (payload: unknown) => send({ type: 'message', id: req.id, payload }));
  child.once('error', (e: NodeJS.ErrnoException) => {
    if (run.done || child.pid !== undefined) return;
    run.done = true;
    running.delete(req.id);
    send({ type: 'failed', id: req.id, code: e.code ?? 'ESPAWN', message: e.message });
  });
  // A group leaves nothing behind: stragglers (soffice forks soffice.bin) go with the leader, at its
  // exit and not at 'close', which would wait for a straggler holding the output pipes open.
  child.once('exit', () => {
    if (run.group) signal(run, 'SIGKILL');
  });
  // A group over its memory bound is killed as a whole; the end says why.
  if (req.group && req.maxRssBytes !== null && child.pid !== undefined) memory.watch(child.pid, req.maxRssBytes, () => signal(run, 'SIGKILL'));
  child.once('close', (code, sig) => {
    running.delete(req.id);
    const watched = child.pid !== undefined ? memory.unwatch(child.pid) : { overMemory: false, peakRssBytes: 0 };
    if (run.done) return;
    run.done = true;
    send({ type: 'closed', id: req.id, code, signal: sig, ...watched });
  });
  if (child.pid !== undefined) send({ type: 'started', id: req.id, pid: child.pid });
}

function writeStdin(msg: StdinChunk): void {
  const stdin = running.get(msg.id)?.child.stdin;
  if (!stdin || stdin.destroyed) return;
  if (msg.data === null) stdin.end();
  else stdin.write(msg.data);
}

function forward(msg: ChildMessage): void {
  const child = running.get(msg.id)?.child;
  if (child?.connected) child.send(msg.payload as Serializable);
}

function kill(msg: KillRequest): void {
  const run = running.get(msg.id);
  if (run) signal(run, msg.signal);
}

process.on('message', (msg: ToHelper) => {
  if (msg.type === 'launch') launch(msg);
  else if (msg.type === 'stdin') writeStdin(msg);
  else if (msg.type === 'kill') kill(msg);
  else if (msg.type === 'message') forward(msg);
});

process.on('disconnect', () => {
  for (const run of running.values()) signal(run, 'SIGKILL');
  process.exit(0);
});

process.on('SIGINT', () => undefined);
process.on('SIGTERM', () => undefined);

/**
 * Starting a tool (ffprobe, ffmpeg, LibreOffice, poppler, the SVG rasterizer) without forking the
 * server: every child is started by the launcher helper (helper.ts), a small process forked once,
 * at start, while the server is small. A fork from the server itself copies its page tables on the
 * event loop, 60 ms at 1.6 GB of RSS (docs/reliability.md).
 *
 * One helper per process, started by `startLauncher()` (serve does so first thing) or by the first
 * launch. If it dies, its runs end as not started, their children are killed, and the next launch
 * starts a new helper.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { compiledSibling } from '../core/compiled-path.js';
import type { FromHelper, LaunchRequest, OutputStream, ToHelper } from './protocol.js';

export interface LaunchOptions {
  cwd?: string;
  /** The child's environment; default: this process's. */
  env?: NodeJS.ProcessEnv;
  /** The child leads a process group of its own, killed as a whole by kill() and once it exits. */
  group?: boolean;
  /** Written to the child's stdin, which is then closed; without it stdin is /dev/null. */
  stdin?: Uint8Array;
  onStdout?: (chunk: Buffer) => void;
  onStderr?: (chunk: Buffer) => void;
  /** Bytes delivered per stream at most; the rest is dropped. Default: no limit. */
  maxOutputBytes?: number;
  /** Output without a handler goes to this process's stdout/stderr instead of /dev/null. */
  inheritOutput?: boolean;
  /** For a Node program: an IPC channel (`advanced` serialization); its messages arrive here. */
  onMessage?: (payload: unknown) => void;
  /** With `group`: the whole group is killed once one of its processes' RSS passes this (bytes). */
  maxRssBytes?: number;
}

/** How a launch ended: the child's exit, or why it never ran (or was lost with the helper). */
export type Exit =
  | {
      started: true;
      code: number | null;
      signal: NodeJS.Signals | null;
      /** Killed for passing `maxRssBytes`. */
      overMemory: boolean;
      /** The largest RSS of one of its processes seen while it ran (with `maxRssBytes`), else 0. */
      peakRssBytes: number;
    }
  | { started: false; code: string; message: string };

export interface Launched {
  /** Settles once the child has exited and all its output has been delivered; never rejects. */
  readonly exited: Promise<Exit>;
  /** Signals the child (its whole group with `group`); after it has exited, does nothing. */
  kill(signal?: NodeJS.Signals): void;
  /** Sends a message to an `onMessage` child (dropped once it has exited). */
  send(payload: unknown): void;
  /** The child's pid once the helper has started it, else null. */
  readonly pid: number | null;
}

interface Run {
  options: LaunchOptions;
  pid: number | null;
  settle: (exit: Exit) => void;
}

/** Input goes to the helper in pieces: one large message would be copied in one go on each side. */
const STDIN_CHUNK = 256 * 1024;

class Launcher {
  private helper: ChildProcess | null = null;
  private nextId = 1;
  private readonly runs = new Map<number, Run>();

  start(): void {
    this.ensureHelper();
  }

  helperPid(): number | null {
    return this.helper?.pid ?? null;
  }

  launch(cmd: string, args: string[], options: LaunchOptions = {}): Launched {
    const id = this.nextId++;
    const helper = this.ensureHelper();
    const exited = new Promise<Exit>((resolve) => {
      this.runs.set(id, {
        options,
        pid: null,
        settle: (exit) => {
          this.runs.delete(id);
          if (this.runs.size === 0) helper.channel?.unref();
          resolve(exit);
        },
      });
    });
    helper.channel?.ref();
    const relay: OutputStream[] = [];
    if (options.onStdout) relay.push('stdout');
    if (options.onStderr) relay.push('stderr');
    this.send(helper, {
      type: 'launch', id, cmd, args, cwd: options.cwd, env: plainEnv(options.env ?? process.env), group: options.group ?? false,
      stdin: options.stdin !== undefined, relay, maxOutputBytes: options.maxOutputBytes ?? Number.MAX_SAFE_INTEGER,
      inheritOutput: options.inheritOutput ?? false, ipc: options.onMessage !== undefined,
      maxRssBytes: options.group && options.maxRssBytes !== undefined ? options.maxRssBytes : null,
    } satisfies LaunchRequest);
    if (options.stdin !== undefined) void this.sendInput(helper, id, options.stdin);
    const live = (): boolean => this.runs.has(id) && this.helper === helper;
    const runs = this.runs;
    return {
      exited,
      kill: (signal: NodeJS.Signals = 'SIGKILL') => {
        if (live()) this.send(helper, { type: 'kill', id, signal });
      },
      send: (payload: unknown) => {
        if (live()) this.send(helper, { type: 'message', id, payload });
      },
      get pid() {
        return runs.get(id)?.pid ?? null;
      },
    };
  }

  /**
   * The input in pieces, each sent once the one before has been written to the channel: serialising
   * and copying 12 MB in one go held the event loop 22 ms (a hostile 200,000-element SVG).
   */
  private async sendInput(helper: ChildProcess, id: number, input: Uint8Array): Promise<void> {
    for (let at = 0; at < input.length; at += STDIN_CHUNK) {
      if (!this.runs.has(id) || !helper.connected) return;
      await new Promise<void>((resolve) => helper.send({ type: 'stdin', id, data: input.subarray(at, at + STDIN_CHUNK) } satisfies ToHelper, () => resolve()));
    }
    this.send(helper, { type: 'stdin', id, data: null });
  }

  private send(helper: ChildProcess, message: ToHelper): void {
    // A helper that has just died: its exit handler ends the run.
    if (helper.connected) helper.send(message);
  }

  private ensureHelper(): ChildProcess {
    if (this.helper) return this.helper;
    const helper = fork(compiledSibling(import.meta.url, './helper.js'), [], {
      serialization: 'advanced',
      execArgv: [],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    // The helper never keeps this process alive by itself; pending runs hold the channel (launch()).
    helper.unref();
    helper.channel?.unref();
    helper.on('message', (message: FromHelper) => this.onMessage(message));
    helper.once('exit', () => this.onHelperGone(helper));
    // A failed fork reports an 'error' and no exit.
    helper.once('error', () => this.onHelperGone(helper));
    this.helper = helper;
    return helper;
  }

  private onMessage(message: FromHelper): void {
    const run = this.runs.get(message.id);
    if (!run) return;
    if (message.type === 'started') run.pid = message.pid;
    else if (message.type === 'output') deliver(run.options, message.stream, message.data);
    else if (message.type === 'message') run.options.onMessage?.(message.payload);
    else if (message.type === 'failed') run.settle({ started: false, code: message.code, message: message.message });
    else run.settle({ started: true, code: message.code, signal: message.signal, overMemory: message.overMemory, peakRssBytes: message.peakRssBytes });
  }

  /** Children of a dead helper may outlive it: kill them here, and end their runs. */
  private onHelperGone(helper: ChildProcess): void {
    if (this.helper !== helper) return;
    this.helper = null;
    for (const run of [...this.runs.values()]) {
      if (run.pid !== null) killQuietly(run.options.group ? -run.pid : run.pid);
      run.settle({ started: false, code: 'ELAUNCHER', message: 'the process launcher stopped' });
    }
  }
}

function deliver(options: LaunchOptions, stream: OutputStream, data: Uint8Array): void {
  const chunk = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if (stream === 'stdout') options.onStdout?.(chunk);
  else options.onStderr?.(chunk);
}

function plainEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v;
  return out;
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

const launcher = new Launcher();

/** Forks the helper now (serve calls this first, while the process is small). */
export function startLauncher(): void {
  launcher.start();
}

/** Starts `cmd` with `args` (no shell) through the helper. */
export function launch(cmd: string, args: string[], options?: LaunchOptions): Launched {
  return launcher.launch(cmd, args, options);
}

/** The helper's pid, for tests and diagnostics; null before it is started. */
export function launcherPid(): number | null {
  return launcher.helperPid();
}

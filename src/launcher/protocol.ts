/**
 * Messages between the server and its launcher helper (helper.ts), over the IPC channel with
 * `advanced` serialization (Buffers travel as bytes). One launch is one id; the helper answers it
 * with `started` or `failed`, then output chunks, then exactly one `closed` (after `started`).
 */
export type OutputStream = 'stdout' | 'stderr';

export interface LaunchRequest {
  type: 'launch';
  id: number;
  cmd: string;
  args: string[];
  cwd: string | undefined;
  env: Record<string, string>;
  /** The child leads a process group of its own, killed as a whole (on kill and after it exits). */
  group: boolean;
  /** Input follows as `stdin` messages; otherwise the child's stdin is /dev/null. */
  stdin: boolean;
  /** Streams to relay; the others go to /dev/null. */
  relay: OutputStream[];
  /** Bytes relayed per stream at most; the rest is read and dropped. */
  maxOutputBytes: number;
  /** Streams not relayed go to the helper's own (the server's terminal or log) instead of /dev/null. */
  inheritOutput: boolean;
  /** A Node child with an IPC channel (`advanced` serialization): `message`s are relayed both ways. */
  ipc: boolean;
  /** With `group`: the group is killed once any of its processes' RSS passes this (bytes). */
  maxRssBytes: number | null;
}

/** A piece of the child's input; `data: null` closes its stdin. */
export interface StdinChunk {
  type: 'stdin';
  id: number;
  data: Uint8Array | null;
}

export interface KillRequest {
  type: 'kill';
  id: number;
  signal: NodeJS.Signals;
}

/** A message for (ToHelper) or from (FromHelper) an `ipc` child. */
export interface ChildMessage {
  type: 'message';
  id: number;
  payload: unknown;
}

export type ToHelper = LaunchRequest | StdinChunk | KillRequest | ChildMessage;

export type FromHelper =
  | { type: 'started'; id: number; pid: number }
  | { type: 'failed'; id: number; code: string; message: string }
  | { type: 'output'; id: number; stream: OutputStream; data: Uint8Array }
  | ChildMessage
  | { type: 'closed'; id: number; code: number | null; signal: NodeJS.Signals | null; overMemory: boolean; peakRssBytes: number };

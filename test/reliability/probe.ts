/**
 * Event-loop stall probe: a worker thread (its own event loop, so the test's work cannot delay it)
 * asks the server's /healthz every ~10 ms over one keep-alive connection and records how long each
 * answer took. The server answers /healthz in front of all routing, so an answer that takes more
 * than a few ms means the server's single event loop was busy with something else: that gap is
 * the observable "event-loop stall".
 */
import { Worker } from 'node:worker_threads';

export interface Stall {
  /** Epoch ms when the slow probe answered (or gave up). */
  endMs: number;
  latencyMs: number;
}

export interface ProbeResult {
  samples: number;
  maxLatencyMs: number;
  /** Probes slower than the threshold, oldest first. */
  stalls: Stall[];
}

export interface Probe {
  stop(): Promise<ProbeResult>;
  /** Called as soon as a slow probe answers. */
  onStall(listener: (stall: Stall) => void): void;
  /** Stalls recorded so far (a copy). */
  snapshot(): Promise<ProbeResult>;
}

const WORKER_SOURCE = `
const http = require('node:http');
const { parentPort, workerData } = require('node:worker_threads');
const { url, intervalMs, thresholdMs, timeoutMs } = workerData;
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
let samples = 0, maxLatencyMs = 0, running = true;
const stalls = [];
function record(latency) {
  samples++;
  if (latency > maxLatencyMs) maxLatencyMs = latency;
  if (latency > thresholdMs) {
    const stall = { endMs: Date.now(), latencyMs: Math.round(latency) };
    stalls.push(stall);
    parentPort.postMessage({ stall });
  }
}
function once() {
  if (!running) return;
  const t0 = performance.now();
  let settled = false;
  const done = () => {
    if (settled) return;
    settled = true;
    const latency = performance.now() - t0;
    record(latency);
    setTimeout(once, Math.max(0, intervalMs - latency));
  };
  const req = http.get(url, { agent, timeout: timeoutMs }, (res) => { res.resume(); res.on('end', done); res.on('error', done); });
  req.on('timeout', () => req.destroy(new Error('probe timeout')));
  req.on('error', done);
}
once();
parentPort.on('message', (m) => {
  const result = { samples, maxLatencyMs: Math.round(maxLatencyMs), stalls: stalls.slice() };
  if (m === 'stop') { running = false; agent.destroy(); }
  parentPort.postMessage({ result });
  if (m === 'stop') parentPort.close();
});
`;

export const STALL_THRESHOLD_MS = 50;

/** Starts probing `base`/healthz (pick a surface other than the one under test). */
export function startProbe(base: string, opts: { intervalMs?: number; thresholdMs?: number } = {}): Probe {
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { url: `${base}/healthz`, intervalMs: opts.intervalMs ?? 10, thresholdMs: opts.thresholdMs ?? STALL_THRESHOLD_MS, timeoutMs: 60_000 },
  });
  const listeners: Array<(stall: Stall) => void> = [];
  let answer: ((r: ProbeResult) => void) | null = null;
  worker.on('message', (m: { stall?: Stall; result?: ProbeResult }) => {
    if (m.stall) for (const l of listeners) l(m.stall);
    if (m.result && answer) answer(m.result);
  });
  let failure: Error | null = null;
  worker.on('error', (err) => (failure = err));
  const ask = (m: 'snapshot' | 'stop') =>
    new Promise<ProbeResult>((resolve, reject) => {
      if (failure) return reject(failure);
      answer = resolve;
      worker.postMessage(m);
    });
  return {
    onStall: (l) => void listeners.push(l),
    snapshot: () => ask('snapshot'),
    async stop() {
      const r = await ask('stop');
      await worker.terminate();
      return r;
    },
  };
}

/** Stalls whose window [end - latency, end] overlaps [startMs, endMs]. */
export function stallsDuring(stalls: readonly Stall[], startMs: number, endMs: number): Stall[] {
  return stalls.filter((s) => s.endMs >= startMs && s.endMs - s.latencyMs <= endMs);
}

/** The longest probe gap while `work` runs (0 when no probe was slow). */
export async function gapDuring(probe: Probe, work: () => Promise<unknown>): Promise<number> {
  await new Promise((r) => setTimeout(r, 20));
  const startMs = Date.now();
  await work();
  const endMs = Date.now();
  // Let the probe that was waiting on the loop answer and report.
  await new Promise((r) => setTimeout(r, 30));
  return Math.max(0, ...stallsDuring((await probe.snapshot()).stalls, startMs, endMs).map((s) => s.latencyMs));
}

/**
 * Whether a suspected stall is real: in each of `rounds` rounds a control request (no processing
 * work) runs, then the suspect; the stall is confirmed only if every suspect run slowed the probe
 * past the threshold AND past twice its round's control. On a quiet machine the controls show no
 * gap, so any stall over 50 ms counts; on a busy one (other processes taking the CPUs) the noise
 * every request sees does not. Returns the smallest confirmed gap, or 0.
 */
export async function confirmStall(probe: Probe, suspect: (round: number) => Promise<unknown>, control: () => Promise<unknown>, rounds = 3): Promise<number> {
  const gaps: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const controlGap = await gapDuring(probe, control);
    const gap = await gapDuring(probe, () => suspect(i));
    if (gap <= STALL_THRESHOLD_MS || gap <= 2 * controlGap) return 0;
    gaps.push(gap);
  }
  return Math.min(...gaps);
}

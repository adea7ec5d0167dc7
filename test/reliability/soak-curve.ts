/**
 * The soak's memory curve: samples of the server's process tree over time, the growth over the
 * second half (from a least-squares fit, so a leak's steady slope shows and a few noisy samples
 * do not), and the points the docs quote (start, 1 min, middle, end, peak).
 */
import { mappingBreakdown, treeMemory } from './process-tree.js';
import { openFds } from './server-health.js';

export interface Probe {
  tMs: number;
  /** The whole tree (server, launcher helper, tool children): the sum of RSS, and of PSS. */
  treeRssMb: number;
  treePssMb: number;
  /** The server process alone. */
  serverRssMb: number;
  processes: number;
  fds: number;
  /** V8's used heap and memory held by JS objects outside it (Buffers), from /metrics. */
  heapMb?: number;
  externalMb?: number;
  /** The server's glibc main arena and other anonymous memory (read once a minute: smaps is slow to walk). */
  arenaMb?: number;
  anonMb?: number;
}

/** One gauge of the server's own /metrics, in MB (undefined when absent). */
function gaugeMb(text: string, name: string): number | undefined {
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+]+)$`, 'm').exec(text);
  return m ? Math.round(Number(m[1]) / 1048576) : undefined;
}

export async function probe(pid: number, tMs: number, metricsUrl: string, withMappings: boolean): Promise<Probe> {
  const tree = treeMemory(pid);
  const server = tree.processes.find((p) => p.pid === pid);
  const p: Probe = { tMs, treeRssMb: tree.rssMb, treePssMb: tree.pssMb, serverRssMb: server?.rssMb ?? 0, processes: tree.processes.length, fds: openFds(pid) };
  if (withMappings) {
    const m = mappingBreakdown(pid);
    p.arenaMb = m?.heapMb;
    p.anonMb = m?.anonMb;
  }
  const text = await fetch(metricsUrl, { signal: AbortSignal.timeout(5_000) }).then((r) => r.text()).catch(() => '');
  p.heapMb = gaugeMb(text, 'nodejs_heap_size_used_bytes');
  p.externalMb = gaugeMb(text, 'nodejs_external_memory_bytes');
  return p;
}

/** Slope (per ms) of the least-squares line through (t, y). */
function slope(points: Array<{ t: number; y: number }>): number {
  const n = points.length;
  if (n < 2) return 0;
  const mt = points.reduce((s, p) => s + p.t, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.t - mt) * (p.y - my);
    den += (p.t - mt) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

/** Growth over the second half of the run, from the fitted slope there. */
export function secondHalfGrowth(samples: readonly Probe[], pick: (s: Probe) => number): number {
  const half = samples.slice(Math.floor(samples.length / 2));
  if (half.length < 2) return 0;
  const span = half[half.length - 1]!.tMs - half[0]!.tMs;
  return slope(half.map((s) => ({ t: s.tMs, y: pick(s) }))) * span;
}

/** The sample nearest to `tMs`. */
function at(samples: readonly Probe[], tMs: number): Probe {
  return samples.reduce((best, s) => (Math.abs(s.tMs - tMs) < Math.abs(best.tMs - tMs) ? s : best));
}

/** The figures the docs quote, for one measure of the samples. */
export function curveSummary(samples: readonly Probe[], pick: (s: Probe) => number): Record<string, number> {
  const end = samples[samples.length - 1]!;
  return {
    start: pick(samples[0]!),
    at1min: pick(at(samples, 60_000)),
    mid: pick(at(samples, end.tMs / 2)),
    end: pick(end),
    peak: Math.max(...samples.map(pick)),
    secondHalfGrowth: Math.round(secondHalfGrowth(samples, pick) * 10) / 10,
  };
}

/** `60s:412/398MB s301 p3 f41 h52 x30 a18/190`: tree RSS/PSS, server RSS, processes, fds, heap, external, arena/anon. */
export function formatProbe(s: Probe): string {
  const mappings = s.arenaMb === undefined ? '' : ` a${s.arenaMb}/${s.anonMb}`;
  return `${Math.round(s.tMs / 1000)}s:${s.treeRssMb}/${s.treePssMb}MB s${s.serverRssMb} p${s.processes} f${s.fds} h${s.heapMb ?? '?'} x${s.externalMb ?? '?'}${mappings}`;
}

/**
 * What a server's whole process tree holds in memory, from /proc: the server, the launcher helper
 * it forks and any tool child of either (an SVG rasterizer, ffmpeg). RSS counts a shared page in
 * every process mapping it, so the tree's sum is an upper bound; PSS splits shared pages among
 * their users and adds up to what the tree really costs the machine.
 */
import fs from 'node:fs';

export interface ProcessMemory {
  pid: number;
  name: string;
  rssMb: number;
  pssMb: number;
}

export interface TreeMemory {
  rssMb: number;
  pssMb: number;
  processes: ProcessMemory[];
}

function read(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    // The process (or thread) ended between listing and reading.
    return null;
  }
}

/** `pid` and every live descendant, parents before children. */
export function processTree(pid: number): number[] {
  const out: number[] = [];
  const visit = (p: number) => {
    out.push(p);
    for (const task of fs.readdirSync(`/proc/${p}/task`, { withFileTypes: true }).map((d) => d.name)) {
      const children = read(`/proc/${p}/task/${task}/children`) ?? '';
      for (const c of children.split(' ').filter(Boolean)) visit(Number(c));
    }
  };
  try {
    visit(pid);
  } catch {
    // A process of the tree ended while it was listed: what was read so far stands.
  }
  return out;
}

const kbField = (text: string, field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0);

export function processMemory(pid: number): ProcessMemory | null {
  const rollup = read(`/proc/${pid}/smaps_rollup`);
  const name = (read(`/proc/${pid}/comm`) ?? '?').trim();
  if (rollup === null) return null;
  return { pid, name, rssMb: Math.round(kbField(rollup, 'Rss') / 1024), pssMb: Math.round(kbField(rollup, 'Pss') / 1024) };
}

export function treeMemory(pid: number): TreeMemory {
  const processes = processTree(pid)
    .map(processMemory)
    .filter((p): p is ProcessMemory => p !== null);
  return {
    rssMb: processes.reduce((s, p) => s + p.rssMb, 0),
    pssMb: processes.reduce((s, p) => s + p.pssMb, 0),
    processes,
  };
}

/**
 * Where one process's resident memory is, by kind of mapping: glibc's main arena (`[heap]`), other
 * anonymous memory (V8's heaps, thread arenas, libvips' buffers, thread stacks) and file-backed
 * pages (code, the models' files, mapped blobs). Reading smaps walks every mapping: once a minute
 * at most beside a soak.
 */
export function mappingBreakdown(pid: number): { heapMb: number; anonMb: number; fileMb: number } | null {
  const smaps = read(`/proc/${pid}/smaps`);
  if (smaps === null) return null;
  let heap = 0;
  let anon = 0;
  let file = 0;
  let kind: 'heap' | 'anon' | 'file' = 'anon';
  for (const line of smaps.split('\n')) {
    const header = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ (\d+)\s*(.*)$/.exec(line);
    if (header) {
      const target = header[2] ?? '';
      kind = target === '[heap]' ? 'heap' : target === '' || target.startsWith('[') ? 'anon' : 'file';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (!rss) continue;
    const kb = Number(rss[1]);
    if (kind === 'heap') heap += kb;
    else if (kind === 'anon') anon += kb;
    else file += kb;
  }
  return { heapMb: Math.round(heap / 1024), anonMb: Math.round(anon / 1024), fileMb: Math.round(file / 1024) };
}

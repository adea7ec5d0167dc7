/**
 * Confinement of the tools that read untrusted files (LibreOffice, poppler, ffmpeg, ffprobe).
 * A document names URLs and paths (an HTML <img>, a DOCX INCLUDEPICTURE field, an HLS playlist's
 * entries) and the tool follows them: confined, it can't. Each confined tool runs
 *
 *   prlimit --data=<bound> bwrap <view> -- <tool> <args>
 *
 * - bubblewrap gives it new namespaces (network with nothing but its own loopback: no address of
 *   this machine or any other is reachable; pid; ipc; uts; user where the kernel allows), no
 *   capabilities, and a file system of its own: the system's programs and libraries read-only
 *   (/usr, the ld cache, fonts, LibreOffice's /etc part), a small private /tmp, and nothing else
 *   but the paths the launch names (its input read-only, its work folder writable). No /etc/passwd,
 *   no data dir, no home.
 * - RLIMIT_DATA at the memory bound: no process of the tool can allocate more. The launcher helper
 *   also watches each process's RSS (rss-watch.ts) and stops the group once one reaches 7/8 of the
 *   bound: a tool that grows step by step (a zip bomb) is stopped there with a clear reason, before
 *   an allocation fails somewhere inside it (which some tools answer with a bare crash).
 *
 * `STOWAGE_TOOL_SANDBOX=off` runs tools unconfined (the memory bound stays), for platforms that
 * cannot give bubblewrap its namespaces; with the default (`required`) a node that can't confine a
 * tool refuses to run it, and says why.
 */
import fs from 'node:fs';
import path from 'node:path';
import { launch, type Launched, type LaunchOptions } from './launch.js';

export type SandboxMode = 'required' | 'off';

export interface ToolPolicy {
  sandbox: SandboxMode;
  /** RLIMIT_DATA of every process of a tool, bytes; the group is stopped at 7/8 of it (RSS). */
  memoryBytes: number;
}

/** The RSS at which a tool's group is stopped: below its RLIMIT_DATA, so the watch sees it first. */
export const rssBound = (memoryBytes: number): number => Math.floor((memoryBytes / 8) * 7);

/**
 * What a confined tool may touch besides the system's read-only programs and libraries. Paths
 * are mounted at the same (absolute) place; the tool's arguments should name them absolutely.
 */
export interface ToolAccess {
  /** Files or directories mounted read-only at their own path (the input). */
  read: string[];
  /** Directories mounted writable at their own path (the work folder); the first is the cwd. */
  write: string[];
}

export const DEFAULT_TOOL_POLICY: ToolPolicy = { sandbox: 'required', memoryBytes: 1024 ** 3 };

let policy: ToolPolicy = DEFAULT_TOOL_POLICY;

/** Set once at start from the configuration (STOWAGE_TOOL_SANDBOX, STOWAGE_TOOL_MEMORY_BYTES). */
export function setToolPolicy(next: ToolPolicy): void {
  if (next.sandbox !== policy.sandbox) availability = null;
  policy = next;
}

export function toolPolicy(): ToolPolicy {
  return policy;
}

export class SandboxUnavailableError extends Error {
  constructor(reason: string) {
    super(`the tool sandbox (bubblewrap) is not available on this node: ${reason}; install bubblewrap and allow user namespaces, or set STOWAGE_TOOL_SANDBOX=off to run tools unconfined`);
    this.name = 'SandboxUnavailableError';
  }
}

/** The system's part of the view, read-only; absent ones are skipped (`--ro-bind-try`). */
const SYSTEM_READ_ONLY = ['/usr', '/etc/ld.so.cache', '/etc/ld.so.conf', '/etc/ld.so.conf.d', '/etc/alternatives', '/etc/fonts', '/etc/libreoffice', '/var/cache/fontconfig'];
/** Top-level directories that are links into /usr on a merged-/usr system, real ones elsewhere. */
const TOP_LEVEL = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];
/** The private /tmp: LibreOffice puts its pipe there whatever TMPDIR says. */
const TMP_BYTES = 16 * 1024 ** 2;

let systemView: string[] | null = null;

function systemArgs(): string[] {
  if (systemView) return systemView;
  const args: string[] = [];
  for (const p of SYSTEM_READ_ONLY) args.push('--ro-bind-try', p, p);
  for (const p of TOP_LEVEL) {
    const st = fs.lstatSync(p, { throwIfNoEntry: false });
    if (st?.isSymbolicLink()) args.push('--symlink', fs.readlinkSync(p), p);
    else if (st?.isDirectory()) args.push('--ro-bind', p, p);
  }
  systemView = args;
  return args;
}

/** The bwrap arguments before `--` for a tool with `access`. */
export function bwrapArgs(access: ToolAccess): string[] {
  const binds = [
    ...access.write.map((p) => ({ p: path.resolve(p), flag: '--bind' })),
    ...access.read.map((p) => ({ p: path.resolve(p), flag: '--ro-bind' })),
  ].sort((a, b) => a.p.length - b.p.length); // a parent before what is mounted inside it
  return [
    // Every namespace (net, pid, ipc, uts, cgroup; user where the kernel allows, also as root),
    // and no nested user namespace: the tool cannot build itself a new view.
    '--unshare-all', '--unshare-user', '--disable-userns',
    '--die-with-parent', '--cap-drop', 'ALL',
    ...systemArgs(),
    '--proc', '/proc', '--dev', '/dev',
    '--size', String(TMP_BYTES), '--tmpfs', '/tmp',
    ...binds.flatMap(({ p, flag }) => [flag, p, p]),
    // The root itself (and the directories made above for the mounts) becomes read-only.
    '--remount-ro', '/',
    '--chdir', access.write[0] !== undefined ? path.resolve(access.write[0]) : '/',
  ];
}

/** `cmd args` as the policy runs it: under the memory bound, confined unless the sandbox is off. */
export function confinedCommand(cmd: string, args: string[], access: ToolAccess, current: ToolPolicy = policy): { cmd: string; args: string[] } {
  const bound = String(current.memoryBytes);
  const tool = current.sandbox === 'off' ? [cmd, ...args] : ['bwrap', ...bwrapArgs(access), '--', cmd, ...args];
  return { cmd: 'prlimit', args: [`--data=${bound}:${bound}`, '--', ...tool] };
}

type Availability = { ok: true; detail: string } | { ok: false; reason: string };
let availability: { until: number; result: Promise<Availability> } | null = null;
/** A failed probe is tried again after this long (an operator may fix the node meanwhile). */
const RETRY_PROBE_MS = 30_000;

/**
 * Whether a confined tool can start here: runs `true` confined, as every tool will be. A success
 * is remembered for good, a failure for 30 s. With the sandbox off, says so without probing.
 */
export function sandboxAvailability(): Promise<Availability> {
  if (policy.sandbox === 'off') return Promise.resolve({ ok: false, reason: 'turned off (STOWAGE_TOOL_SANDBOX=off)' });
  if (availability && Date.now() < availability.until) return availability.result;
  const entry = { until: Number.POSITIVE_INFINITY, result: probe() };
  availability = entry;
  void entry.result.then((r) => {
    if (!r.ok) entry.until = Date.now() + RETRY_PROBE_MS;
  });
  return entry.result;
}

async function probe(): Promise<Availability> {
  let stderr = '';
  const { cmd, args } = confinedCommand('true', [], { read: [], write: [] }, { ...policy, sandbox: 'required' });
  const child = launch(cmd, args, { group: true, onStderr: (d) => (stderr += d.toString()), maxOutputBytes: 4096 });
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  const exit = await child.exited;
  clearTimeout(timer);
  if (!exit.started) return { ok: false, reason: exit.code === 'ENOENT' ? 'prlimit (util-linux) is not installed' : exit.message };
  if (exit.code === 0) return { ok: true, detail: 'bubblewrap: no network, a read-only system view, only the input and work folder' };
  const said = stderr.trim().split('\n')[0] ?? '';
  if (/failed to execute bwrap/.test(said)) return { ok: false, reason: 'bwrap is not installed' };
  return { ok: false, reason: said || `bwrap ended with ${exit.signal ?? `exit ${exit.code}`}` };
}

/**
 * The program named by a confined launch that could not be executed (not installed), from what
 * prlimit or bwrap said; null when the program ran.
 */
export function missingProgram(stderr: string): string | null {
  const m = /^(?:prlimit: failed to execute|bwrap: execvp) ([^:\n]+): No such file or directory/m.exec(stderr);
  return m ? m[1]! : null;
}

/**
 * Launches `cmd` as the policy says: confined to `access` (unless the sandbox is off) and under the
 * memory bound, in a process group of its own. Rejects with SandboxUnavailableError when the
 * sandbox is required and cannot run here: the tool is not started unconfined.
 */
export async function launchTool(cmd: string, args: string[], access: ToolAccess, options: Omit<LaunchOptions, 'group' | 'maxRssBytes'> = {}): Promise<Launched> {
  const current = policy;
  if (current.sandbox === 'required') {
    const ready = await sandboxAvailability();
    if (!ready.ok) throw new SandboxUnavailableError(ready.reason);
  }
  const confined = confinedCommand(cmd, args, access, current);
  return launch(confined.cmd, confined.args, { ...options, group: true, maxRssBytes: rssBound(current.memoryBytes) });
}

// Bench helpers: child processes, free ports, CPU ticks from /proc, and wrk runs.
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

export const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

export async function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** Starts `cmd args` (optionally under taskset), resolves once `ready(output)` is true. */
export async function startProc(cmd, args, { env = {}, pin = null, ready, timeoutMs = 30_000 } = {}) {
  const full = pin === null ? [cmd, ...args] : ['taskset', '-c', String(pin), cmd, ...args];
  const child = spawn(full[0], full.slice(1), { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  await new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`${cmd} did not start:\n${out}`)), timeoutMs);
    const check = () => { if (ready(out)) { clearTimeout(t); resolve(); } };
    child.stdout.on('data', check);
    child.stderr.on('data', check);
    child.once('exit', (code) => { clearTimeout(t); reject(new Error(`${cmd} exited ${code}:\n${out}`)); });
    check();
  });
  child.removeAllListeners('exit');
  const exited = new Promise((r) => child.once('exit', r));
  return {
    pid: child.pid,
    output: () => out,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}

export async function waitHttp(url, timeoutMs = 15_000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    try { await fetch(url); return; } catch { if (Date.now() > end) throw new Error(`no answer from ${url}`); }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** utime+stime ticks of `pid` and all its descendants (nginx workers, taskset's child). */
export function cpuTicks(pid) {
  const procs = new Map();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      procs.set(Number(d), { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) });
    } catch { /* gone */ }
  }
  let total = 0;
  const stack = [pid];
  while (stack.length) {
    const p = stack.pop();
    total += procs.get(p)?.ticks ?? 0;
    for (const [c, info] of procs) if (info.ppid === p) stack.push(c);
  }
  return total;
}

/**
 * utime+stime ticks of `pid`'s main thread alone (its task with tid = pid): for a Node server, the
 * event loop, whose saturation bounds its throughput whatever its other threads do.
 */
export function mainThreadTicks(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]);
  } catch {
    return 0;
  }
}

const LUA = `
counter = COUNTER_START
BODY = nil
HEAD, TAIL = nil, nil
if BODY_FILE ~= "" then local f = io.open(BODY_FILE, "rb"); BODY = f:read("*a"); f:close() end
if BODY and UNIQUE_MARK ~= "" then
  local i, j = string.find(BODY, UNIQUE_MARK, 1, true)
  HEAD, TAIL = string.sub(BODY, 1, i - 1), string.sub(BODY, j + 1)
end
request = function()
  counter = counter + 1
  local p = PATTERN
  if string.find(p, "%%d") then p = string.format(p, 300 + (counter % 100)) end
  local body = BODY
  if HEAD then body = HEAD .. string.format("%016d", counter) .. TAIL end
  return wrk.format(METHOD, p, HEADERS, body)
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("BENCHJSON {\\"requests\\":%d,\\"bytes\\":%d,\\"duration_us\\":%d,\\"p50\\":%d,\\"p99\\":%d,\\"errors\\":%d,\\"non2xx\\":%d}\\n",
    summary.requests, summary.bytes, summary.duration, latency:percentile(50), latency:percentile(99), e.connect + e.read + e.write + e.timeout, e.status))
end
`;

/** Unmeasured run before each measured one (BENCH_WARMUP_SECONDS): the JIT, file caches, connections. */
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 1);

/**
 * wrk against `base + pattern` (`%d` becomes 300..399, a different width per request); returns
 * req/s, latency percentiles (ms) and the server's CPU ms per request over the measured run.
 * `method` and `bodyFile` (a file whose bytes every request sends) make it a POST bench; with
 * `uniqueMark` (16 bytes found once in the body) each request puts its own counter there instead.
 */
export async function wrk({ base, pattern, headers = {}, connections, seconds, serverPid, pin = null, dir, method = 'GET', bodyFile = '', uniqueMark = '', warmupSeconds = WARMUP_SECONDS }) {
  const lua = path.join(dir, `wrk-${Math.random().toString(36).slice(2)}.lua`);
  const hdr = `{${Object.entries(headers).map(([k, v]) => `[${JSON.stringify(k)}]=${JSON.stringify(v)}`).join(',')}}`;
  // Every wrk run (the warm-up too) counts from its own random start: a counter from 0 in each run
  // repeated the bodies of the run before, and Stowage deduplicated them (another path than a new
  // upload's: the staged copy removed again) where the floor wrote every one.
  const counterStart = () => Math.floor(Math.random() * 1e15);
  const writeLua = () => fs.writeFileSync(lua, `COUNTER_START = ${counterStart()}\nPATTERN = ${JSON.stringify(pattern)}\nHEADERS = ${hdr}\nMETHOD = ${JSON.stringify(method)}\nBODY_FILE = ${JSON.stringify(bodyFile)}\nUNIQUE_MARK = ${JSON.stringify(uniqueMark)}\n${LUA}`);
  const run = (secs) => {
    writeLua();
    const args = ['-t1', `-c${connections}`, `-d${secs}s`, '--timeout', '30s', '-s', lua, base];
    const full = pin === null ? ['wrk', ...args] : ['taskset', '-c', String(pin), 'wrk', ...args];
    return new Promise((resolve, reject) => {
      const c = spawn(full[0], full.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      c.stdout.on('data', (d) => (out += d));
      c.stderr.on('data', (d) => (out += d));
      c.once('exit', () => {
        const m = /BENCHJSON (\{.*\})/.exec(out);
        m ? resolve(JSON.parse(m[1])) : reject(new Error(`wrk failed:\n${out}`));
      });
    });
  };
  await run(warmupSeconds); // warm-up: JIT, file caches, connections
  const before = cpuTicks(serverPid);
  const mainBefore = mainThreadTicks(serverPid);
  const r = await run(seconds);
  const after = cpuTicks(serverPid);
  const mainAfter = mainThreadTicks(serverPid);
  fs.rmSync(lua, { force: true });
  const secs = r.duration_us / 1e6;
  return {
    rps: r.requests / secs,
    p50: r.p50 / 1000,
    p99: r.p99 / 1000,
    cpuMsPerReq: ((after - before) * 1000) / CLK_TCK / Math.max(1, r.requests),
    /** The server's main thread alone (see mainThreadTicks); its share of the run's wall time is `mainMsPerReq * rps / 1000`. */
    mainMsPerReq: ((mainAfter - mainBefore) * 1000) / CLK_TCK / Math.max(1, r.requests),
    requests: r.requests,
    /** Mean response size (headers included): equal work is only comparable at equal output. */
    bytesPerReq: r.bytes / Math.max(1, r.requests),
    bad: r.errors + r.non2xx,
  };
}

/** True when `cmd` runs (`wrk`, `taskset`, `nginx` are Debian packages a fresh machine may lack). */
export function have(cmd, args = ['-V']) {
  try {
    execFileSync(cmd, args, { stdio: 'ignore' });
    return true;
  } catch (err) {
    // Ran but exited non-zero (wrk -V exits 1): present. ENOENT: missing.
    return err?.code !== 'ENOENT';
  }
}

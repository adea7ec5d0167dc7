/**
 * Runs a conversion tool (soffice, pdftoppm, ffmpeg, …) as a child process in a group of its own,
 * bounded in time: on timeout the whole group is killed (soffice forks soffice.bin), and after a
 * normal exit any straggler of the group is killed too, so nothing is left behind. Output is
 * capped. Never runs a shell.
 */
import { spawn } from 'node:child_process';

export class ToolError extends Error {
  constructor(
    message: string,
    /** The tool ran and failed on this input (vs. could not be started). */
    readonly inputFault: boolean,
    /** The tool died of a signal, or aborted (exit 128 and up), on its own: not a clean refusal. */
    readonly crashed = false,
  ) {
    super(message);
    this.name = 'ToolError';
  }
}

export interface ToolRun {
  stdout: string;
  stderr: string;
}

const MAX_OUTPUT = 64 * 1024;

export function runTool(cmd: string, args: string[], opts: { timeoutMs: number; cwd?: string; env?: NodeJS.ProcessEnv; what: string }): Promise<ToolRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (d: Buffer) => { if (stdout.length < MAX_OUTPUT) stdout += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { if (stderr.length < MAX_OUTPUT) stderr += d.toString(); });
    const killGroup = (): void => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, opts.timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(new ToolError(`${opts.what} could not be started (${(err as NodeJS.ErrnoException).code ?? err.message})`, false));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      killGroup();
      if (timedOut) reject(new ToolError(`${opts.what} was stopped: the conversion took longer than its time limit.`, true));
      else if (code === 0) resolve({ stdout, stderr });
      else reject(new ToolError(`${opts.what} failed${signal ? ` (${signal})` : ` (exit ${code})`}${firstLine(stderr)}`, true, signal !== null || (code ?? 0) >= 128));
    });
  });
}

function firstLine(text: string): string {
  const line = text.split('\n').map((l) => l.trim()).find((l) => l !== '' && !/javaldx|java may not function/i.test(l));
  return line ? `: ${line.slice(0, 300)}` : '';
}

/**
 * Runs a conversion tool (soffice, pdftoppm, ffmpeg, …) as a child process in a group of its own,
 * bounded in time: on timeout the whole group is killed (soffice forks soffice.bin), and after a
 * normal exit any straggler of the group is killed too, so nothing is left behind. Output is
 * capped. Never runs a shell. Started through the launcher helper, never forked from the server.
 */
import { launch } from '../core/launcher/launch.js';

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

export async function runTool(cmd: string, args: string[], opts: { timeoutMs: number; cwd?: string; env?: NodeJS.ProcessEnv; what: string }): Promise<ToolRun> {
  let stdout = '';
  let stderr = '';
  const child = launch(cmd, args, {
    cwd: opts.cwd,
    env: opts.env,
    group: true,
    maxOutputBytes: MAX_OUTPUT,
    onStdout: (d) => (stdout += d.toString()),
    onStderr: (d) => (stderr += d.toString()),
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, opts.timeoutMs);
  const exit = await child.exited;
  clearTimeout(timer);
  if (!exit.started) throw new ToolError(`${opts.what} could not be started (${exit.code})`, false);
  if (timedOut) throw new ToolError(`${opts.what} was stopped: the conversion took longer than its time limit.`, true);
  if (exit.code === 0) return { stdout, stderr };
  const { code, signal } = exit;
  throw new ToolError(`${opts.what} failed${signal ? ` (${signal})` : ` (exit ${code})`}${firstLine(stderr)}`, true, signal !== null || (code ?? 0) >= 128);
}

function firstLine(text: string): string {
  const line = text.split('\n').map((l) => l.trim()).find((l) => l !== '' && !/javaldx|java may not function/i.test(l));
  return line ? `: ${line.slice(0, 300)}` : '';
}

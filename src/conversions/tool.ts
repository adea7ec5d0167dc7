/**
 * Runs a conversion tool (soffice, pdftoppm, ffmpeg, …) as a child process in a group of its own,
 * confined (no network, only its input and work folder: src/launcher/sandbox.ts) and bounded
 * in memory and time: past either bound the whole group is killed (soffice forks soffice.bin), and
 * after a normal exit any straggler of the group is killed too, so nothing is left behind. Output
 * is capped. Never runs a shell. Started through the launcher helper, never forked from the server.
 */
import { launchTool, missingProgram, SandboxUnavailableError, toolPolicy, type ToolAccess } from '../launcher/sandbox.js';

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

export interface ToolOptions {
  timeoutMs: number;
  /** What the tool may read and write besides the system's programs (its input, its work folder). */
  access: ToolAccess;
  env?: NodeJS.ProcessEnv;
  what: string;
}

/** What a tool says when an allocation was refused by its RLIMIT_DATA. */
const OUT_OF_MEMORY = /std::bad_alloc|cannot allocate memory|out of memory/i;

export async function runTool(cmd: string, args: string[], opts: ToolOptions): Promise<ToolRun> {
  let stdout = '';
  let stderr = '';
  const child = await launchTool(cmd, args, opts.access, {
    env: opts.env,
    maxOutputBytes: MAX_OUTPUT,
    onStdout: (d) => (stdout += d.toString()),
    onStderr: (d) => (stderr += d.toString()),
  }).catch((err: unknown) => {
    // Not the document's fault: retried, and the last attempt says why.
    throw err instanceof SandboxUnavailableError ? new ToolError(`${opts.what} was not started: ${err.message}`, false) : err;
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, opts.timeoutMs);
  const exit = await child.exited;
  clearTimeout(timer);
  if (!exit.started) throw new ToolError(`${opts.what} could not be started (${exit.code})`, false);
  if (exit.code !== 0 && missingProgram(stderr) === cmd) throw new ToolError(`${opts.what} could not be started (ENOENT: ${cmd} is not installed)`, false);
  if (timedOut) throw new ToolError(`${opts.what} was stopped: the conversion took longer than its time limit.`, true);
  if (exit.overMemory || (exit.code !== 0 && OUT_OF_MEMORY.test(stderr))) throw new ToolError(`${opts.what} was stopped: it needed more than its memory bound of ${mib(toolPolicy().memoryBytes)} MiB.`, true);
  if (exit.code === 0) return { stdout, stderr };
  const { code, signal } = exit;
  throw new ToolError(`${opts.what} failed${signal ? ` (${signal})` : ` (exit ${code})`}${firstLine(stderr)}`, true, signal !== null || (code ?? 0) >= 128);
}

const mib = (bytes: number): number => Math.round(bytes / 1024 ** 2);

function firstLine(text: string): string {
  const line = text.split('\n').map((l) => l.trim()).find((l) => l !== '' && !/javaldx|java may not function/i.test(l));
  return line ? `: ${line.slice(0, 300)}` : '';
}

/**
 * How a conversion tool's end is classified (src/conversions/tool.ts): a clean non-zero exit is the
 * tool refusing the input; dying of a signal or aborting (exit 128 and up) is a crash, which the
 * document conversion tries once more (LibreOffice aborts now and then while it starts).
 */
import { describe, expect, it } from 'vitest';
import { runTool, ToolError } from '../../src/conversions/tool.js';

const endOf = (script: string) => runTool('sh', ['-c', script], { timeoutMs: 10_000, what: 'sh' }).then(() => null, (err: unknown) => err as ToolError);

describe('runTool', () => {
  it('a clean exit 0 resolves with the output', async () => {
    await expect(runTool('sh', ['-c', 'echo hello'], { timeoutMs: 10_000, what: 'sh' })).resolves.toMatchObject({ stdout: 'hello\n' });
  });

  it('exit 1 is a refusal, not a crash', async () => {
    const err = await endOf('echo "bad input" >&2; exit 1');
    expect(err).toBeInstanceOf(ToolError);
    expect(err).toMatchObject({ inputFault: true, crashed: false });
    expect(err?.message).toMatch(/exit 1.*bad input/);
  });

  it('an abort (SIGABRT) and exit 134 are crashes', async () => {
    expect(await endOf('kill -ABRT $$')).toMatchObject({ crashed: true });
    expect(await endOf('exit 134')).toMatchObject({ crashed: true });
  });

  it('a tool stopped at its time limit is not a crash', async () => {
    const err = await runTool('sh', ['-c', 'sleep 5'], { timeoutMs: 200, what: 'sh' }).then(() => null, (e: unknown) => e as ToolError);
    expect(err).toMatchObject({ crashed: false });
    expect(err?.message).toMatch(/time limit/);
  });
});

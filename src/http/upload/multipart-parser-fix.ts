/**
 * A fix for a wedge in the multipart parser under @fastify/multipart (@fastify/busboy's Dicer).
 *
 * Dicer holds the callback of the chunk it is parsing while a part's buffer is full (`_pause`),
 * and releases it when that part is read (`_read`) or when the last counted part ends. A part
 * nobody reads is resumed a tick later: a skipped part (an `attachment` disposition, a part over
 * the files/fields/parts limits) or a field over `fieldSize`. When such a part fills its buffer
 * and ends in the same chunk, `_read` is never called (the part has already ended), and if the
 * closing delimiter is in that chunk too, the part's end emits 'finish' instead of releasing the
 * callback. The held write keeps Dicer from ever finishing, so busboy never ends the form:
 * /base/ waited forever for its next part, with the request fully read (the reliability
 * suite's `base-parts-iterator-hang`). Whether it happens depends on where TCP cut the body.
 *
 * The fix releases the held write whenever a part ends: an ended part needs no more backpressure,
 * and a part still filling its buffer pauses Dicer again on its next push.
 * test/http/multipart-wedge.test.ts fails without it.
 */
import { createRequire } from 'node:module';
import path from 'node:path';

interface DicerPart {
  once(event: 'end', listener: () => void): unknown;
}

interface DicerInternals {
  emit(event: string | symbol, ...args: unknown[]): boolean;
  _unpause(): void;
}

let applied = false;

/** Patches Dicer once per process; a version without these internals is left alone (see the test). */
export function fixMultipartParserWedge(): void {
  if (applied) return;
  applied = true;
  const require = createRequire(import.meta.url);
  let proto: DicerInternals | undefined;
  try {
    // The copy @fastify/multipart loads: resolve @fastify/busboy from @fastify/multipart's directory.
    const busboyMain = require.resolve('@fastify/busboy', { paths: [path.dirname(require.resolve('@fastify/multipart'))] });
    proto = (require(path.join(path.dirname(busboyMain), 'deps/dicer/lib/Dicer.js')) as { prototype?: DicerInternals }).prototype;
  } catch {
    return;
  }
  if (typeof proto?.emit !== 'function' || typeof proto._unpause !== 'function') return;
  const emit = proto.emit;
  // Every part Dicer hands to busboy passes through emit('part'); most are created and ended
  // within one chunk, so this is the one place to see each of them.
  proto.emit = function (this: DicerInternals, event: string | symbol, ...args: unknown[]): boolean {
    if (event === 'part') (args[0] as DicerPart).once('end', () => this._unpause());
    return emit.call(this, event, ...args);
  };
}

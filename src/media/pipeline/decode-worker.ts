/**
 * Runs inside a worker thread of decode-pool.ts: the decoders written in JS or wasm (TGA, PCX,
 * BMP, HEIC), the opaque-alpha check and the SVG sanitiser (a 6 MB SVG is ~60 ms of parsing)
 * walk every pixel or byte, so they must never run on the main
 * thread, where one hostile file would stall every request of every surface; so do the pixel
 * steps of large images (pixel-file.ts), whose buffers the main thread must not even hold. Errors travel back
 * as values: structured cloning keeps an Error's message but drops its status and code.
 */
import { open } from 'node:fs/promises';
import { move, transferableSymbol, valueSymbol } from 'piscina';
import { isAppError } from '../../core/errors.js';
import { type OtherKind, decodeOther, heicSize } from './decoders.js';
import { widenGrey } from './pixels.js';
import type { PixelFileResult, PixelFileTask } from './pixel-file.js';
import { type SvgTransform, prepareSvg } from './svg.js';

export type DecodeTask =
  | { op: 'decode'; kind: OtherKind; path: string | null; bytes: Uint8Array | null }
  | { op: 'heic-size'; path: string | null; bytes: Uint8Array | null }
  | ({ op: 'pixel-file' } & PixelFileTask)
  | { op: 'widen'; data: Uint8Array; width: number; height: number; grey: 1 | 2 }
  | { op: 'svg'; path: string | null; bytes: Uint8Array | null; transform: SvgTransform | null };

export type DecodeReply =
  | { ok: true; data: Uint8Array; width: number; height: number; channels: 3 | 4 }
  | { ok: true; size: { width: number; height: number } | null }
  | { ok: true; svg: Uint8Array; elements: number; width: number; height: number }
  | { ok: true; file: PixelFileResult }
  | { ok: false; status: number; code: string; message: string };

async function bytesOf(task: { path: string | null; bytes: Uint8Array | null }): Promise<Buffer> {
  if (task.bytes) return Buffer.from(task.bytes.buffer, task.bytes.byteOffset, task.bytes.byteLength);
  const fh = await open(task.path!, 'r');
  try {
    return await fh.readFile();
  } finally {
    await fh.close();
  }
}

/** Decoders always yield RGBA; a fully opaque image goes on as RGB so it encodes as JPEG by default. */
export function dropOpaqueAlpha(rgba: Buffer): { data: Buffer; channels: 3 | 4 } {
  for (let i = 3; i < rgba.length; i += 4) if (rgba[i] !== 255) return { data: rgba, channels: 4 };
  const rgb = Buffer.alloc((rgba.length / 4) * 3);
  for (let i = 0, o = 0; i < rgba.length; i += 4, o += 3) { rgb[o] = rgba[i]!; rgb[o + 1] = rgba[i + 1]!; rgb[o + 2] = rgba[i + 2]!; }
  return { data: rgb, channels: 3 };
}

/** A view that owns its whole ArrayBuffer can be moved to the main thread without a copy. */
function movable(data: Buffer): Uint8Array {
  const owns = data.byteOffset === 0 && data.byteLength === data.buffer.byteLength && data.buffer instanceof ArrayBuffer;
  return owns ? data : new Uint8Array(data);
}

/** The pixels are handed over, not copied: piscina sends `valueSymbol` with `transferableSymbol` moved. */
function pixelsReply(data: Buffer, width: number, height: number, channels: 3 | 4): DecodeReply {
  const pixels = movable(data);
  const reply: DecodeReply = { ok: true, data: pixels, width, height, channels };
  return move({ [transferableSymbol]: [pixels.buffer], [valueSymbol]: reply } as never) as unknown as DecodeReply;
}

/** The prepared SVG as UTF-8 bytes, moved (not copied) to the main thread. */
function svgReply(p: { svg: string; elements: number; width: number; height: number }): DecodeReply {
  const svg = movable(Buffer.from(p.svg));
  const reply: DecodeReply = { ok: true, svg, elements: p.elements, width: p.width, height: p.height };
  return move({ [transferableSymbol]: [svg.buffer], [valueSymbol]: reply } as never) as unknown as DecodeReply;
}

export default async function run(task: DecodeTask): Promise<DecodeReply> {
  try {
    if (task.op === 'pixel-file') {
      // Imported on first use: a thread that only decodes BMP or sanitises SVG never loads sharp.
      const { mapPixelFile } = await import('./pixel-file.js');
      return { ok: true, file: await mapPixelFile(task) };
    }
    if (task.op === 'widen') return pixelsReply(widenGrey(task.data, task.grey), task.width, task.height, task.grey === 2 ? 4 : 3);
    const input = await bytesOf(task);
    if (task.op === 'svg') return svgReply(prepareSvg(input.toString('utf8'), task.transform));
    if (task.op === 'heic-size') return { ok: true, size: await heicSize(input) };
    const rgba = await decodeOther(task.kind, input);
    const { data, channels } = dropOpaqueAlpha(rgba.data);
    return pixelsReply(data, rgba.width, rgba.height, channels);
  } catch (e) {
    if (isAppError(e)) return { ok: false, status: e.status, code: e.code, message: e.message };
    return { ok: false, status: 400, code: 'InvalidImage', message: `Cannot decode this image: ${String((e as Error)?.message ?? e).split('\n')[0]}` };
  }
}

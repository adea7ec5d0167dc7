/**
 * Rasterizing an SVG (and reading its size) in a child process (svg-raster-child.ts) that is
 * killed at the render's deadline (started by the launcher helper, not forked from the server): librsvg's parse and draw are single calls libvips' own timeout
 * cannot stop, so inside the server a hostile SVG held a libvips thread for minutes. The returned
 * promise settles only once the child has exited, so whoever bounds concurrent renders (the CDN
 * work queue) counts the child until it is gone.
 */
import os from 'node:os';
import { compiledSibling } from '../../core/compiled-path.js';
import { AppError } from '../../core/errors.js';
import { launch } from '../../launcher/launch.js';
import { SVG_CHILD_HEAP_MB } from '../limits.js';
import type { SvgHeader } from './svg-raster-child.js';
import { imageErrors } from '../../core/error-catalogue/media.js';

export type { SvgHeader };
export interface RasterizedSvg { header: SvgHeader; png: Buffer | null }

/** The compiled child next to this module (under vitest, src/ runs as TypeScript: use dist/). */
const childFile = (): string => compiledSibling(import.meta.url, './svg-raster-child.js');

/**
 * The child's output at most: a header line and a PNG of an image within the input pixel limit,
 * quickly compressed (never near this in practice; a bound, not a size).
 */
const MAX_CHILD_OUTPUT = 1024 ** 3;

/**
 * `header`: the SVG's size as librsvg reads it; `raster`: also the image at that size as PNG (the
 * caller checks the size against the input limit between the two, from `onHeader`).
 */
export async function runSvgChild(svg: Buffer, mode: 'header' | 'raster', timeoutMs: number, onHeader: (h: SvgHeader) => void = () => undefined): Promise<RasterizedSvg> {
  const started = Date.now();
  await childSlot();
  try {
    return await spawnSvgChild(svg, mode, timeoutMs - (Date.now() - started), onHeader);
  } finally {
    releaseChildSlot();
  }
}

/**
 * Children alive at once on this node. The CDN's work queue bounds its renders, but uploads read
 * SVG sizes here too: without a bound of its own, a burst of SVG uploads would start a process each.
 * One CPU's worth fewer than the CPUs (one on two cores): each child is a Node process with
 * libvips loaded, 55-75 MB of RSS, and two of them at once were the peaks of a 2-core node's
 * memory under a mixed load (docs/operations.md "Memory").
 */
const MAX_CHILDREN = Math.max(1, os.availableParallelism() - 1);
let running = 0;
const waiting: Array<() => void> = [];

function childSlot(): Promise<void> {
  if (running < MAX_CHILDREN) {
    running++;
    return Promise.resolve();
  }
  return new Promise((resolve) => waiting.push(resolve));
}

/** Hands the slot to the next waiter (running stays the same) or frees it. */
function releaseChildSlot(): void {
  const next = waiting.shift();
  if (next) next();
  else running--;
}

async function spawnSvgChild(svg: Buffer, mode: 'header' | 'raster', timeoutMs: number, onHeader: (h: SvgHeader) => void): Promise<RasterizedSvg> {
  const out: Buffer[] = [];
  let err = '';
  let header: SvgHeader | null = null;
  let failure: AppError | null = null;
  const onStdout = (chunk: Buffer): void => {
    out.push(chunk);
    if (header) return;
    const all = Buffer.concat(out);
    const nl = all.indexOf(10);
    if (nl === -1) return;
    header = JSON.parse(all.subarray(0, nl).toString('utf8')) as SvgHeader;
    out.length = 0;
    if (nl + 1 < all.length) out.push(all.subarray(nl + 1));
    try {
      onHeader(header);
    } catch (e) {
      kill(e instanceof AppError ? e : imageErrors.invalid(String(e)));
    }
  };
  const child = launch(process.execPath, [`--max-old-space-size=${SVG_CHILD_HEAP_MB}`, childFile(), mode], {
    stdin: svg,
    onStdout,
    onStderr: (chunk) => {
      if (err.length < 1000) err += chunk.toString('utf8');
    },
    maxOutputBytes: MAX_CHILD_OUTPUT,
  });
  function kill(why: AppError): void {
    failure ??= why;
    child.kill('SIGKILL');
  }
  const timer = setTimeout(() => kill(imageErrors.timeout(`Rasterizing this SVG took longer than ${Math.round(timeoutMs) / 1000} s.`)), Math.max(1, timeoutMs));
  const exit = await child.exited;
  clearTimeout(timer);
  if (failure) throw failure;
  if (!exit.started) throw imageErrors.rasterizerMissing(exit.message);
  if (exit.code !== 0 || !header) throw imageErrors.invalid(`Cannot process this image: ${err.trim() || `SVG rasterizer exited with ${exit.code ?? exit.signal}`}`);
  return { header, png: mode === 'raster' ? Buffer.concat(out) : null };
}

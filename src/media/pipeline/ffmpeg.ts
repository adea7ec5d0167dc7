/**
 * gif2video: an animated GIF to MP4 (H.264) or WebM (VP9) through the ffmpeg binary (Debian
 * package `ffmpeg`). The allowed companions (preview, resize, crop, scale_crop, quality, format)
 * become an ffmpeg filter chain computed from the GIF's header size, in URL order. ffmpeg reads the
 * GIF with the gif demuxer only, confined to the source and its scratch folder, memory bounded.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from '../lazy-sharp.js';
import { AppError } from '../../core/errors.js';
import { launchTool, missingProgram, SandboxUnavailableError } from '../../launcher/sandbox.js';
import { pinnedInput } from './ffmpeg-input.js';
import type { InputKind } from './decoders.js';
import type { Plan } from '../plan.js';
import { MAX_VIDEO_FRAMES, VIDEO_TIMEOUT_MS, checkInputHeader, checkOutput } from '../limits.js';
import type { CropArgs, ScaleCropArgs } from '../operations/geometry.js';
import type { Quality } from './types.js';
import { CENTER, fitInside, fitRatio, intersect, place, resolve } from './place.js';
import { imageErrors } from '../../core/error-catalogue/media.js';

const CRF: Record<Quality, number> = { best: 18, better: 21, normal: 23, smart: 23, smart_retina: 26, lighter: 28, lightest: 32 };

/** Filter chain and final size for the companions, applied in URL order. */
export function videoFilters(plan: Plan, W: number, H: number): { filters: string[]; width: number; height: number } {
  const f: string[] = [];
  let w = W, h = H;
  const scale = (nw: number, nh: number): void => { f.push(`scale=${nw}:${nh}:flags=lanczos`); [w, h] = [nw, nh]; };
  const cut = (x: number, y: number, cw: number, ch: number): void => {
    const hit = intersect(x, y, cw, ch, w, h) ?? { left: 0, top: 0, width: w, height: h };
    f.push(`crop=${hit.width}:${hit.height}:${hit.left}:${hit.top}`);
    [w, h] = [hit.width, hit.height];
  };
  for (const s of plan.steps) {
    if (s.name === 'resize') {
      const a = s.args as { w?: number; h?: number };
      scale(a.w ?? Math.max(1, Math.round((w * a.h!) / h)), a.h ?? Math.max(1, Math.round((h * a.w!) / w)));
    } else if (s.name === 'preview') {
      const a = s.args as { w?: number; h?: number };
      const r = fitInside(w, h, a.w ?? 2048, a.h ?? 2048);
      if (r.w !== w || r.h !== h) scale(r.w, r.h);
    } else if (s.name === 'crop' && (s.args as CropArgs).kind !== 'object') {
      // Crop by object needs the detectors, which see raster images only: it leaves these as they are.
      const a = s.args as Exclude<CropArgs, { kind: 'object' }>;
      const c = a.kind === 'ratio' ? fitRatio(w, h, a.x, a.y) : { w: resolve(a.size.w, w), h: resolve(a.size.h, h) };
      const p = place(a.align, w, h, c.w, c.h);
      cut(p.left, p.top, c.w, c.h);
    } else if (s.name === 'scale_crop') {
      const a = s.args as ScaleCropArgs;
      const k = Math.max(a.w / w, a.h / h);
      scale(Math.max(a.w, Math.round(w * k)), Math.max(a.h, Math.round(h * k)));
      const p = place(a.type ? CENTER : a.align, w, h, a.w, a.h);
      cut(p.left, p.top, a.w, a.h);
    }
  }
  // H.264/VP9 in yuv420p need even sides.
  const ew = Math.max(2, w - (w % 2));
  const eh = Math.max(2, h - (h % 2));
  if (ew !== w || eh !== h) scale(ew, eh);
  return { filters: f, width: w, height: h };
}

export async function renderGif2Video(source: { path: string | null }, kind: InputKind, plan: Plan) {
  // Callers open gif2video sources with a local file (RenderSource docs): ffmpeg reads a path.
  if (source.path === null) throw new Error('gif2video needs the source as a local file');
  const meta = kind === 'sharp' ? await sharp(source.path, { pages: 1 }).metadata().catch(() => null) : null;
  if (!meta || meta.format !== 'gif') throw imageErrors.badOperation('gif2video', 'the file is not a GIF');
  checkInputHeader({ width: meta.width, height: meta.pageHeight ?? meta.height });
  if ((meta.pages ?? 1) > MAX_VIDEO_FRAMES) throw imageErrors.tooLarge(`GIF has more than ${MAX_VIDEO_FRAMES} frames.`);
  const { filters, width, height } = videoFilters(plan, meta.width, meta.pageHeight ?? meta.height);
  checkOutput(width, height, false);
  const container = plan.video ?? 'mp4';
  const quality = (plan.steps.find((s) => s.name === 'quality')?.args as Quality | undefined) ?? 'normal';
  const dir = await mkdtemp(join(tmpdir(), 'stowage-gif2video-'));
  const out = join(dir, `out.${container}`);
  const codec = container === 'mp4'
    ? ['-c:v', 'libx264', '-preset', 'veryfast', '-crf', String(CRF[quality]), '-movflags', '+faststart']
    : ['-c:v', 'libvpx-vp9', '-b:v', '0', '-crf', String(CRF[quality] + 10), '-deadline', 'realtime', '-cpu-used', '8', '-row-mt', '1'];
  try {
    await run('ffmpeg', [
      '-hide_banner', '-loglevel', 'error', '-nostdin', ...pinnedInput('gif'),
      '-i', source.path, '-vf', [...filters, 'format=yuv420p'].join(','), '-an',
      ...codec, '-threads', '1', '-y', out,
    ], { read: [source.path], write: [dir] });
    const body = await readFile(out);
    return { body, contentType: `video/${container}`, width, height, varyAccept: false, format: container };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function run(cmd: string, args: string[], access: { read: string[]; write: string[] }): Promise<void> {
  let err = '';
  const child = await launchTool(cmd, args, access, { onStderr: (d) => (err += d.toString()), maxOutputBytes: 4000 }).catch((e: unknown) => {
    if (e instanceof SandboxUnavailableError) throw imageErrors.notImplemented(`gif2video is not available on this server: ${e.message}.`);
    throw e;
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), VIDEO_TIMEOUT_MS);
  const exit = await child.exited;
  clearTimeout(timer);
  // Not the file's fault, nor a passing one: this node lacks an optional program (stowage doctor says so too).
  if (!exit.started && exit.code === 'ENOENT') throw notInstalled();
  if (!exit.started) throw new Error(`gif2video: ffmpeg could not be started (${exit.message})`);
  if (exit.code !== 0 && missingProgram(err) === cmd) throw notInstalled();
  if (exit.overMemory) throw imageErrors.invalid('gif2video failed: ffmpeg needed more than its memory bound (STOWAGE_TOOL_MEMORY_BYTES).');
  if (exit.code !== 0) throw imageErrors.invalid(`gif2video failed${exit.signal ? ` (${exit.signal})` : ''}: ${err.split('\n')[0] ?? ''}`);
}

const notInstalled = (): AppError => imageErrors.notImplemented('gif2video is not available on this server: ffmpeg is not installed.');

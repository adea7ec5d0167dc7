/**
 * The image pipeline. One fixed order of phases, declared once in PHASES below:
 *
 *   1. settings   output options and input flags (format, quality, progressive, strip_meta,
 *                 srgb, max_icc_size, autorotate, rasterize): their URL position does not matter.
 *   2. decode     header limits (75 Mpx) before decoding, first frame only (rule 3), EXIF
 *                 autorotation unless autorotate/no (rule 2).
 *   3. transform  every transform and state operation in URL order. URL order matters here:
 *                 crop-then-resize differs from resize-then-crop, stretch/setfill/font apply to
 *                 what follows them.
 *   4. preview    the implicit 2048x2048 downscale-only preview when the plan has none of
 *                 resize/smart_resize/scale_crop/preview (rule 1).
 *   5. caps       output size of the last operation: 3000x3000, 5000x5000 with explicit jpeg.
 *   6. encode     colour management, metadata, format/quality/progressive.
 *
 * SVG without rasterize and gif2video take their own short paths (see svg.ts and ffmpeg.ts).
 */
import { AppError, isAppError } from '../core/errors.js';
import type { Plan } from './plan.js';
import { lookup } from './operations/index.js';
import { preview } from './operations/geometry.js';
import { PipelineStage } from './operations/state.js';
import { type Opened, type SourceFile, kindOf, openSource, readSvg } from './operations/source.js';
import { transformSvg } from './operations/svg.js';
import type { LoadedImage, OutputOptions } from './operations/types.js';
import { IMPLICIT_PREVIEW, checkOutput } from './limits.js';
import { encode } from './operations/encode.js';
import { renderGif2Video } from './operations/ffmpeg.js';

export type RenderSource = SourceFile;
export interface RenderContext {
  accept: string | undefined;
  loadOverlay(uuid: string): Promise<RenderSource | null>;
}
export interface RenderResult { body: Buffer; contentType: string; width: number; height: number; varyAccept: boolean; format: string }

export { imageJson } from './operations/info.js';
export { negotiateFormat } from './operations/encode.js';

interface Job {
  source: RenderSource;
  plan: Plan;
  ctx: RenderContext;
  out: OutputOptions;
  opened?: Opened;
  stage?: PipelineStage;
  result?: RenderResult;
}

type Phase = (job: Job) => Promise<void> | void;

const PHASES: readonly Phase[] = [
  function settings(job) {
    for (const step of job.plan.steps) {
      const op = lookup(step.name)!;
      if (op.kind === 'setting') op.apply({ out: job.out } as never, step.args);
    }
  },
  async function decode(job) {
    const opened = await openSource(job.source, { autorotate: job.out.autorotate, ignoreIcc: job.out.srgb === 'fast' });
    job.opened = opened;
    job.stage = new PipelineStage(opened.img, opened.width, opened.height, opened.hasAlpha, job.out, (uuid) => loadOverlay(job, uuid));
  },
  async function transform(job) {
    const s = job.stage!;
    for (const step of job.plan.steps) {
      const op = lookup(step.name)!;
      if (op.kind !== 'setting') await op.apply(s, step.args);
    }
  },
  async function implicitPreview(job) {
    if (!job.plan.steps.some((st) => lookup(st.name)!.sizing)) {
      await preview.apply(job.stage!, { w: IMPLICIT_PREVIEW.width, h: IMPLICIT_PREVIEW.height });
    }
  },
  function caps(job) {
    checkOutput(job.stage!.width, job.stage!.height, job.plan.explicitJpeg);
  },
  async function encodePhase(job) {
    job.result = await encode(job.stage!, job.opened!, job.source, job.ctx.accept);
  },
];

export function defaultOutput(): OutputOptions {
  return { format: null, quality: null, progressive: false, stripMeta: 'all', srgb: 'icc', maxIccKb: null, autorotate: true, rasterize: false };
}

export async function render(source: RenderSource, plan: Plan, ctx: RenderContext): Promise<RenderResult> {
  try {
    const kind = await kindOf(source);
    if (plan.video) return await renderGif2Video(source, kind, plan);
    const job: Job = { source, plan, ctx, out: defaultOutput() };
    if (kind === 'svg') {
      PHASES[0]!(job);
      if (!job.out.rasterize) return await svgAsSvg(job);
    }
    for (const phase of PHASES) await phase(job);
    return job.result!;
  } catch (e) {
    throw asClientError(e);
  }
}

async function svgAsSvg(job: Job): Promise<RenderResult> {
  const text = await readSvg(job.source);
  const sizing = job.plan.steps.some((st) => lookup(st.name)!.sizing);
  const geo = job.plan.steps.filter((st) => lookup(st.name)!.svgGeometry);
  const { svg, width, height } = transformSvg(text, geo, sizing ? null : IMPLICIT_PREVIEW);
  return { body: Buffer.from(svg), contentType: 'image/svg+xml', width, height, varyAccept: false, format: 'svg' };
}

async function loadOverlay(job: Job, uuid: string): Promise<LoadedImage> {
  const src = uuid === 'self' ? job.source : await job.ctx.loadOverlay(uuid);
  if (!src) throw new AppError(400, 'InvalidOperation', `Invalid operation "overlay": file ${uuid} not found or not an image.`);
  return openSource(src, { autorotate: true, ignoreIcc: false });
}

/**
 * libvips and decoder failures on a file are the file's fault: 400, never a crash or a 500.
 * Missing system tools (ffmpeg) and our own bugs stay 500.
 */
function asClientError(e: unknown): unknown {
  if (isAppError(e)) return e;
  const err = e as NodeJS.ErrnoException;
  if (err && (err.code === 'ENOENT' || err.code === 'EACCES' || err.code === 'EMFILE')) return e;
  if (err instanceof TypeError || err instanceof RangeError || err instanceof ReferenceError) {
    // Programming errors in our code: keep the 500, but decoder RangeErrors on bad data are 400.
    if (!/input|image|buffer|pixel|offset|bounds/i.test(err.message)) return e;
  }
  return new AppError(400, 'InvalidImage', `Cannot process this image: ${String(err?.message ?? e).split('\n')[0]}`);
}

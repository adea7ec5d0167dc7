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
 * render() has four explicit branches: `-/json/` (image facts, no pixels decoded for most formats),
 * gif2video (ffmpeg), SVG served as SVG (attributes rewritten, see pipeline/svg.ts), and the raster
 * pipeline above.
 */
import { isAppError } from '../core/errors.js';
import type { Plan } from './plan.js';
import { lookup } from './operations/index.js';
import { preview } from './operations/geometry.js';
import { PipelineStage } from './pipeline/state.js';
import { Scratch } from './pipeline/scratch.js';
import { type Opened, type SourceFile, kindOf, openSource, readSvg } from './pipeline/source.js';
import type { LoadedImage, OutputOptions } from './pipeline/types.js';
import { Deadline, IMPLICIT_PREVIEW, RENDER_TIMEOUT_MS, checkOutput, renderTimeout } from './limits.js';
import { encode } from './pipeline/encode.js';
import { renderGif2Video } from './pipeline/ffmpeg.js';
import { imageJson } from './pipeline/info.js';
import { mainColorsOf } from './detect/pool.js';
import { rgbOf } from './detect/sample.js';
import { detectionKey } from './detect/cache.js';
import { imageErrors } from '../core/error-catalogue/media.js';

export type RenderSource = SourceFile;
export interface RenderContext {
  /** The file's uuid: `-/json/` answers carry it as `id`. */
  fileId: string;
  accept: string | undefined;
  /** Wall-clock bound of this render (default RENDER_TIMEOUT_MS); past it the render is a 400. */
  timeoutMs?: number;
  /**
   * Directory for the render's large intermediate images (pipeline/scratch.ts): the data dir's
   * temporary area, swept after a crash. Its files are removed when the render's work ends.
   */
  scratchDir: string;
  loadOverlay(uuid: string): Promise<RenderSource | null>;
}
export interface RenderResult { body: Buffer; contentType: string; width: number; height: number; varyAccept: boolean; format: string }

export { imageJson };
export { negotiateFormat } from './pipeline/encode.js';

interface Job {
  source: RenderSource;
  plan: Plan;
  ctx: RenderContext;
  out: OutputOptions;
  deadline: Deadline;
  scratch: Scratch;
  opened?: Opened;
  stage?: PipelineStage;
  result?: RenderResult;
}

type Phase = (job: Job) => Promise<void> | void;

/** Phase 1 (settings) runs before the branch choice: `rasterize` decides whether SVG stays SVG. */
function settingsOf(plan: Plan): OutputOptions {
  const out = defaultOutput();
  for (const step of plan.steps) {
    const op = lookup(step.name)!;
    if (op.kind === 'setting') op.apply({ out } as never, step.args);
  }
  return out;
}

/** Phases 2 to 6 of the raster pipeline. */
const PHASES: readonly Phase[] = [
  async function decode(job) {
    const opened = await openSource(job.source, { autorotate: job.out.autorotate, ignoreIcc: job.out.srgb === 'fast', timeoutMs: job.deadline.remainingMs() });
    job.opened = opened;
    job.stage = new PipelineStage(opened.img, opened.width, opened.height, opened.hasAlpha, job.out, (uuid) => loadOverlay(job, uuid), job.deadline, job.scratch, detectKey(job));
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

/**
 * A started render. `answer` settles at the latest at the deadline (a timeout 400 then);
 * `ended` settles (never rejects) when the work itself has stopped, which can be later: a libvips
 * call runs on until its own timeout fires. Whoever bounds concurrent renders, or owns what the
 * render reads, waits for `ended`, not for the answer.
 */
export interface RenderRun {
  answer: Promise<RenderResult>;
  ended: Promise<void>;
}

export function startRender(source: RenderSource, plan: Plan, ctx: RenderContext): RenderRun {
  const deadline = new Deadline(ctx.timeoutMs ?? RENDER_TIMEOUT_MS);
  const scratch = new Scratch(ctx.scratchDir);
  // gif2video is bounded by ffmpeg's own time limit (VIDEO_TIMEOUT_MS).
  const work = plan.video ? kindOf(source).then((kind) => renderGif2Video(source, kind, plan)) : branch(source, plan, ctx, deadline, scratch);
  const answer = (plan.video ? work : deadline.race(work)).catch((e: unknown) => {
    throw asClientError(e, deadline);
  });
  // Scratch files go only once the work has stopped: after a deadline answer libvips may still read them.
  return { answer, ended: work.then(() => undefined, () => undefined).then(() => scratch.dispose()) };
}

/** Renders and answers by the deadline (see RenderRun for work that outlives its answer). */
export function render(source: RenderSource, plan: Plan, ctx: RenderContext): Promise<RenderResult> {
  return startRender(source, plan, ctx).answer;
}

async function branch(source: RenderSource, plan: Plan, ctx: RenderContext, deadline: Deadline, scratch: Scratch): Promise<RenderResult> {
  if (plan.info === 'json') return jsonFacts(source, ctx.fileId, deadline);
  const out = settingsOf(plan);
  if (plan.info === 'detect_faces') return faceFacts({ source, plan, ctx, out, deadline, scratch });
  if (plan.info === 'main_colors') return colourFacts({ source, plan, ctx, out, deadline, scratch });
  const kind = await kindOf(source);
  if (kind === 'svg' && !out.rasterize) return svgAsSvg(source, plan, deadline);
  const job: Job = { source, plan, ctx, out, deadline, scratch };
  for (const phase of PHASES) await phase(job);
  return job.result!;
}

/** `-/json/`: the image facts as the public service answers them, `id` first. */
async function jsonFacts(source: RenderSource, fileId: string, deadline: Deadline): Promise<RenderResult> {
  const info = await imageJson(source, deadline.remainingMs());
  const body = Buffer.from(JSON.stringify({ id: fileId, ...info }));
  return { body, contentType: 'application/json', width: Number(info.width) || 0, height: Number(info.height) || 0, varyAccept: false, format: 'json' };
}

/** Detections of the decoded original are cached per file and decode options. */
function detectKey(job: Job): string {
  return detectionKey(job.ctx.fileId, job.out.autorotate, job.out.srgb);
}

function jsonResult(value: object, width: number, height: number): RenderResult {
  return { body: Buffer.from(JSON.stringify(value)), contentType: 'application/json', width, height, varyAccept: false, format: 'json' };
}

/** `/detect_faces/`: the `-/json/` facts plus `faces` as [x, y, width, height] in pixels of the (autorotated) image. */
async function faceFacts(job: Job): Promise<RenderResult> {
  await PHASES[0]!(job);
  const info = await imageJson(job.source, job.deadline.remainingMs());
  const faces = await job.stage!.detect('faces');
  const { width, height } = job.stage!;
  return jsonResult({ id: job.ctx.fileId, ...info, faces: faces.map((f) => [f.x, f.y, f.width, f.height]) }, width, height);
}

/** `-/main_colors/n/`: the n main colours of the image after the operations before it, as [r, g, b], most frequent first. */
async function colourFacts(job: Job): Promise<RenderResult> {
  await PHASES[0]!(job);
  await PHASES[1]!(job);
  const s = job.stage!;
  const count = job.plan.steps.find((st) => st.name === 'main_colors')!.args as number;
  const sample = await rgbOf(await s.pipe(), s.width, s.height, 64);
  const colors = await mainColorsOf(sample, count, job.deadline.remainingMs());
  return jsonResult({ main_colors: colors }, s.width, s.height);
}

/** SVG without `rasterize` stays SVG (spec rule 4): sanitised, geometry applied to its attributes. */
async function svgAsSvg(source: RenderSource, plan: Plan, deadline: Deadline): Promise<RenderResult> {
  const sizing = plan.steps.some((st) => lookup(st.name)!.sizing);
  const steps = plan.steps.filter((st) => lookup(st.name)!.svgGeometry);
  const { body, width, height } = await readSvg(source, deadline.remainingMs(), { steps, preview: sizing ? null : IMPLICIT_PREVIEW });
  return { body, contentType: 'image/svg+xml', width, height, varyAccept: false, format: 'svg' };
}

async function loadOverlay(job: Job, uuid: string): Promise<LoadedImage> {
  const src = uuid === 'self' ? job.source : await job.ctx.loadOverlay(uuid);
  if (!src) throw imageErrors.badOperation('overlay', `file ${uuid} not found or not an image`);
  return openSource(src, { autorotate: true, ignoreIcc: false, timeoutMs: job.deadline.remainingMs() });
}

/**
 * libvips and decoder failures on a file are the file's fault: 400, never a crash or a 500.
 * Missing system tools (ffmpeg) and our own bugs stay 500.
 */
function asClientError(e: unknown, deadline: Deadline): unknown {
  if (isAppError(e)) return e;
  const err = e as NodeJS.ErrnoException;
  // libvips' own timeout (sharp's `timeout`, set from the deadline): "timeout: 42% complete".
  if (err instanceof Error && /^timeout: \d+% complete/.test(err.message)) return renderTimeout(deadline.ms);
  if (err && (err.code === 'ENOENT' || err.code === 'EACCES' || err.code === 'EMFILE')) return e;
  if (err instanceof TypeError || err instanceof RangeError || err instanceof ReferenceError) {
    // Programming errors in our code: keep the 500, but decoder RangeErrors on bad data are 400.
    if (!/input|image|buffer|pixel|offset|bounds/i.test(err.message)) return e;
  }
  return imageErrors.invalid(`Cannot process this image: ${String(err?.message ?? e).split('\n')[0]}`);
}

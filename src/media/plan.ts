/**
 * CDN URL operations -> typed plan, before any byte of the file is read. Pure: never imports
 * sharp (the operation table only imports its types).
 *
 * Normalisation: empty segments and `@`-ops are dropped; a later duplicate of a non-stackable
 * operation replaces the earlier one (stackable: overlay, rect, text, text_align, font, text_box,
 * blur_region, stretch, resize, scale_crop, crop). `canonical` is rebuilt from what remains, less
 * `inline` (which only changes a header): it is the cache key and ETag input of a rendition (the
 * delivery feature adds the negotiated format for `format/auto`, see negotiateFormat in render.ts).
 */
import { lookup } from './operations/index.js';
import { bad } from './pipeline/params.js';
import { isVideoFormat } from './operations/output.js';
import { checkChainLength } from './limits.js';
import { imageErrors } from '../core/error-catalogue/media.js';

export interface PlanStep { name: string; args: unknown; params: string[] }

export interface Plan {
  steps: PlanStep[];
  /** The operations that decide the bytes, normalised: `-/name/params/-/…` without `inline`. */
  canonical: string;
  /** Info outputs answered with JSON instead of an image. */
  info: 'json' | 'detect_faces' | 'main_colors' | null;
  inline: boolean | null;
  /** The bytes must be read and rendered: any operation but inline and @-tags (json included). */
  isProcessing: boolean;
  /** gif2video output container, or null when the plan is not gif2video. */
  video: 'mp4' | 'webm' | null;
  /** `-/format/jpeg/` was given: the output cap is 5000x5000 instead of 3000x3000. */
  explicitJpeg: boolean;
}

/** Operations that start without a `-` segment before them (`/<uuid>/gif2video/…`). */
const BARE_OPS = new Set(['gif2video', 'detect_faces']);

export function parsePlan(segments: string[]): Plan {
  const raw = splitOps(segments.filter((s) => s !== ''));
  checkChainLength(raw.filter((r) => !r.name.startsWith('@')).length);
  const parsed: PlanStep[] = [];
  for (const { name, params } of raw) {
    if (name.startsWith('@')) continue; // client library tags such as -/@clib/blocks/1.2.3/uc-img/
    const op = lookup(name);
    if (!op) throw imageErrors.unknownOperation(name);
    parsed.push({ name, args: op.parse(params), params });
  }
  return planOf(parsed);
}

/** `first`'s operations, then `then`'s, as one plan (a group's default effects, then the URL's). */
export function appendPlan(first: Plan, then: Plan): Plan {
  checkChainLength(first.steps.length + then.steps.length);
  return planOf([...first.steps, ...then.steps]);
}

/** Checks the combination and normalises; `parsed` in URL order, duplicates not yet dropped. */
function planOf(parsed: PlanStep[]): Plan {
  const jsonAt = parsed.findIndex((s) => s.name === 'json');
  if (jsonAt !== -1 && parsed.slice(jsonAt + 1).some((s) => s.name !== 'inline')) {
    throw bad('json', 'it must be the last operation');
  }
  const colorsAt = parsed.findIndex((s) => s.name === 'main_colors');
  if (colorsAt !== -1 && parsed.slice(colorsAt + 1).some((s) => s.name !== 'inline')) {
    throw bad('main_colors', 'it must be the last operation');
  }
  const facesAt = parsed.findIndex((s) => s.name === 'detect_faces');
  if (facesAt !== -1 && parsed.some((s) => s.name !== 'detect_faces' && s.name !== 'inline')) {
    throw bad('detect_faces', 'it cannot be combined with other operations');
  }
  const steps = dedupe(parsed);
  const formatStep = steps.find((s) => s.name === 'format');
  const isVideo = steps.some((s) => s.name === 'gif2video');
  if (isVideo) {
    for (const s of steps) {
      if (s.name !== 'inline' && !lookup(s.name)!.videoCompanion) {
        throw bad(s.name, 'it cannot be combined with gif2video (allowed: format, quality, preview, resize, crop, scale_crop)');
      }
    }
    if (formatStep && !isVideoFormat(formatStep.args)) throw bad('format', `gif2video produces mp4 or webm, got "${String(formatStep.args)}"`);
  } else if (formatStep && isVideoFormat(formatStep.args)) {
    throw bad('format', `"${String(formatStep.args)}" is only valid together with gif2video`);
  }
  const inlineStep = steps.find((s) => s.name === 'inline');
  return {
    steps,
    canonical: steps.filter((s) => s.name !== 'inline').map((s) => ['-', s.name, ...s.params].join('/')).join('/'),
    info: jsonAt !== -1 ? 'json' : facesAt !== -1 ? 'detect_faces' : colorsAt !== -1 ? 'main_colors' : null,
    inline: inlineStep ? (inlineStep.args as boolean) : null,
    isProcessing: steps.some((s) => s.name !== 'inline'),
    video: isVideo ? ((formatStep?.args as 'mp4' | 'webm' | undefined) ?? 'mp4') : null,
    explicitJpeg: formatStep?.args === 'jpeg',
  };
}

function splitOps(segments: string[]): { name: string; params: string[] }[] {
  const out: { name: string; params: string[] }[] = [];
  let cur: { name: string; params: string[] } | null = null;
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i]!;
    if (seg === '-') {
      const name = segments[i + 1];
      if (name === undefined || name === '-') throw imageErrors.invalidOperation('Empty operation after "-/".');
      cur = { name: name.startsWith('@') ? name : name.toLowerCase(), params: [] };
      out.push(cur);
      i++;
    } else if (cur) {
      cur.params.push(seg);
    } else if (BARE_OPS.has(seg.toLowerCase())) {
      cur = { name: seg.toLowerCase(), params: [] };
      out.push(cur);
    } else {
      throw imageErrors.invalidOperation(`Expected "-/" before operation "${seg}".`);
    }
  }
  return out;
}

/** Later duplicates of non-stackable operations win; the survivor keeps its own (later) position. */
function dedupe(steps: PlanStep[]): PlanStep[] {
  const lastIndex = new Map<string, number>();
  steps.forEach((s, i) => lastIndex.set(s.name, i));
  return steps.filter((s, i) => lookup(s.name)!.stackable === true || lastIndex.get(s.name) === i);
}

/**
 * Pure parameter grammar shared by the operation modules (wire-reference §3.4).
 * Every helper throws AppError 400 whose message names the operation and the problem, so a bad
 * URL is refused before any byte of the file is read.
 */
import { AppError } from '../../core/errors.js';
import { MAX_PARAM_PX } from '../limits.js';
import { imageErrors } from '../../core/error-catalogue/media.js';

export function bad(op: string, problem: string): AppError {
  return imageErrors.badOperation(op, problem);
}

export function unavailable(op: string, what: string): AppError {
  return imageErrors.operationNotAvailable(op, what);
}

/** A length either in pixels or in percent of a reference length. */
export interface Length { value: number; unit: 'px' | 'p' }
export interface Size { w: Length; h: Length }
export type Keyword = 'center' | 'top' | 'bottom' | 'left' | 'right';
/** Alignment: a keyword, or X,Y offsets (px or percent of the free space). */
export type Align = { keyword: Keyword } | { x: Length; y: Length };
export interface Rgba { r: number; g: number; b: number; alpha: number }

export const KEYWORDS: readonly Keyword[] = ['center', 'top', 'bottom', 'left', 'right'];
const NUM = /^-?\d+(?:\.\d+)?$/;

export function expectCount(op: string, params: readonly string[], min: number, max: number): void {
  if (params.length < min) throw bad(op, `expects at least ${min} parameter(s), got ${params.length}`);
  if (params.length > max) throw bad(op, `expects at most ${max} parameter(s), got ${params.length}`);
}

export function int(op: string, what: string, raw: string | undefined, min: number, max: number): number {
  if (raw === undefined || !/^-?\d+$/.test(raw)) throw bad(op, `${what} must be an integer, got "${raw ?? ''}"`);
  const n = Number(raw);
  if (n < min || n > max) throw bad(op, `${what} must be between ${min} and ${max}, got ${n}`);
  return n;
}

export function oneOf<T extends string>(op: string, what: string, raw: string | undefined, values: readonly T[]): T {
  if (raw !== undefined && (values as readonly string[]).includes(raw)) return raw as T;
  throw bad(op, `${what} must be one of ${values.join(', ')}, got "${raw ?? ''}"`);
}

/** `120`, `50p`, `50%` (the `%25` escape arrives decoded). Negative only when allowed. */
export function length(op: string, what: string, raw: string, allowNegative = false): Length {
  const m = /^(-?\d+(?:\.\d+)?)(p|%)?$/.exec(raw);
  if (!m || !NUM.test(m[1]!)) throw bad(op, `${what} must be pixels or a percent like 50p, got "${raw}"`);
  const value = Number(m[1]);
  const unit = m[2] ? 'p' : 'px';
  if (!allowNegative && value < 0) throw bad(op, `${what} must not be negative, got "${raw}"`);
  if (unit === 'px' && !Number.isInteger(value)) throw bad(op, `${what} in pixels must be an integer, got "${raw}"`);
  if (unit === 'p' && Math.abs(value) > 1000) throw bad(op, `${what} percent is out of range, got "${raw}"`);
  if (unit === 'px' && Math.abs(value) > MAX_PARAM_PX) throw bad(op, `${what} must be at most ${MAX_PARAM_PX} px, got "${raw}"`);
  return { value, unit };
}

/** `WxH` with both parts, each px or percent (`50px50p` is W=50p, H=50p). */
export function size(op: string, raw: string | undefined, allowPercent = true): Size {
  const m = raw === undefined ? null : /^(\d+(?:\.\d+)?[p%]?)x(\d+(?:\.\d+)?[p%]?)$/.exec(raw);
  if (!m) throw bad(op, `dimensions must look like WxH, got "${raw ?? ''}"`);
  const w = length(op, 'width', m[1]!);
  const h = length(op, 'height', m[2]!);
  if (!allowPercent && (w.unit === 'p' || h.unit === 'p')) throw bad(op, `dimensions must be in pixels, got "${raw}"`);
  if (w.value <= 0 || h.value <= 0) throw bad(op, `dimensions must be positive, got "${raw}"`);
  return { w, h };
}

/** Pixel dimensions where one side may be omitted (`300x`, `x200`, `300x200`). */
export function pixelDims(op: string, raw: string | undefined, requireBoth: boolean): { w?: number; h?: number } {
  const m = raw === undefined ? null : /^(\d*)x(\d*)$/.exec(raw);
  if (!m || (m[1] === '' && m[2] === '')) throw bad(op, `dimensions must look like WxH, Wx or xH, got "${raw ?? ''}"`);
  if (requireBoth && (m[1] === '' || m[2] === '')) throw bad(op, `both width and height are required, got "${raw}"`);
  const out: { w?: number; h?: number } = {};
  if (m[1] !== '') out.w = int(op, 'width', m[1], 1, MAX_PARAM_PX);
  if (m[2] !== '') out.h = int(op, 'height', m[2], 1, MAX_PARAM_PX);
  return out;
}

/** Keyword, or `X,Y` in px (negative allowed when `negative`) or percent. */
export function align(op: string, raw: string, opts: { percentOnly?: boolean; negative?: boolean } = {}): Align {
  if ((KEYWORDS as readonly string[]).includes(raw)) return { keyword: raw as Keyword };
  const parts = raw.split(',');
  if (parts.length !== 2) {
    throw bad(op, `alignment must be one of ${KEYWORDS.join(', ')} or X,Y, got "${raw}"`);
  }
  const x = length(op, 'X offset', parts[0]!, opts.negative);
  const y = length(op, 'Y offset', parts[1]!, opts.negative);
  if (opts.percentOnly && (x.unit !== 'p' || y.unit !== 'p')) throw bad(op, `alignment must be percent like 50p,50p, got "${raw}"`);
  return { x, y };
}

export function isAlign(raw: string): boolean {
  return (KEYWORDS as readonly string[]).includes(raw) || /^-?\d+(?:\.\d+)?[p%]?,-?\d+(?:\.\d+)?[p%]?$/.test(raw);
}

/** Hex colour without `#`: 3, 4, 6 or 8 digits (the last two of 8 are alpha). */
export function color(op: string, raw: string | undefined): Rgba {
  const hex = (raw ?? '').toLowerCase();
  if (!/^(?:[0-9a-f]{3,4}|[0-9a-f]{6}|[0-9a-f]{8})$/.test(hex)) {
    throw bad(op, `colour must be hex like fff, ece3d2 or ece3d280, got "${raw ?? ''}"`);
  }
  const full = hex.length <= 4 ? [...hex].map((c) => c + c).join('') : hex;
  const byte = (i: number): number => parseInt(full.slice(i, i + 2), 16);
  return { r: byte(0), g: byte(2), b: byte(4), alpha: full.length === 8 ? byte(6) / 255 : 1 };
}

/** Ratio `N:M` as used by crop. */
export function ratio(op: string, raw: string): { x: number; y: number } {
  const m = /^(\d+(?:\.\d+)?):(\d+(?:\.\d+)?)$/.exec(raw);
  if (!m) throw bad(op, `ratio must look like 4:3, got "${raw}"`);
  const x = Number(m[1]);
  const y = Number(m[2]);
  if (!(x > 0 && y > 0)) throw bad(op, `ratio parts must be positive, got "${raw}"`);
  return { x, y };
}

/** Opacity `Np` 0..100 (a bare number is accepted as percent too). */
export function opacity(op: string, raw: string): number {
  const m = /^(\d+)[p%]?$/.exec(raw);
  if (!m) throw bad(op, `opacity must look like 50p, got "${raw}"`);
  const n = Number(m[1]);
  if (n > 100) throw bad(op, `opacity must be between 0 and 100, got ${n}`);
  return n / 100;
}

export function none(op: string, params: readonly string[]): null {
  expectCount(op, params, 0, 0);
  return null;
}

/**
 * Object key patterns of remote copies (spec "Copy to remote storage"):
 *   ${default}       = ${uuid}/${auto_filename}
 *   ${auto_filename} = ${filename}${effects}${ext}
 *   ${effects}       = the processing operations of the source URL, written as in a CDN URL
 *                      (`/-/resize/100x/-/format/png`), '' when none
 *   ${filename}      = the file's name without extension (the sanitized `filename`, safe in keys)
 *   ${uuid}          = the source file's uuid
 *   ${ext}           = the extension with its dot ('' when none), of the output format when processed
 * Literal text between variables is kept; an unknown or unclosed variable is an invalid pattern.
 */
import type { RenderResult } from '../media/render.js';
import { restErrors } from '../core/error-catalogue/rest.js';

export const VARIABLES = ['default', 'auto_filename', 'effects', 'filename', 'uuid', 'ext'] as const;
export type PatternValues = Record<'uuid' | 'filename' | 'effects' | 'ext', string>;

const invalid = restErrors.copyPatternInvalid;

/** Throws the wire's 400 unless the pattern is well formed and yields a non-empty key. */
export function validatePattern(pattern: string): void {
  if (pattern.trim() === '' || pattern.length > 512) throw invalid(pattern);
  const stripped = pattern.replace(/\$\{([a-z_]+)\}/g, (whole, name: string) => ((VARIABLES as readonly string[]).includes(name) ? '' : whole));
  if (stripped.includes('${') || stripped.includes('$') || /[\u0000-\u001f]/.test(pattern)) throw invalid(pattern);
}

export function expandPattern(pattern: string, v: PatternValues): string {
  validatePattern(pattern);
  const auto = `${v.filename}${v.effects}${v.ext}`;
  const values: Record<string, string> = { ...v, auto_filename: auto, default: `${v.uuid}/${auto}` };
  const key = pattern.replace(/\$\{([a-z_]+)\}/g, (_w, name: string) => values[name] ?? '').replace(/^\/+/, '');
  if (key === '' || key.length > 1024) throw invalid(pattern);
  return key;
}

/** `['-','resize','100x','-','format','png']` -> `/-/resize/100x/-/format/png`. */
export function effectsForKey(ops: string[]): string {
  return ops.length === 0 ? '' : '/' + ops.join('/');
}

/** File extension (with the dot) of a rendition's format: `.jpg` for jpeg. */
export function extensionOf(result: RenderResult): string {
  const f = result.format.toLowerCase();
  return f === 'jpeg' ? '.jpg' : `.${f}`;
}

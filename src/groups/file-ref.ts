/**
 * A reference to a file as clients write it in `/group/` entries and copy sources
 * (wire-reference §1.9, §2.6): a bare uuid, `uuid/-/ops/`, or a CDN URL `https://host/uuid/-/ops/[name]`.
 * Only the uuid and the operations matter; the host of a URL is not checked because the file must
 * belong to the caller's project anyway (and pyuploadcare sends the vendor's CDN host by default).
 */
import { parseUuid } from '../core/ids.js';
import { parsePlan } from '../media/plan.js';

export interface FileRef {
  uuid: string;
  /** Operation segments as written (still percent-encoded), each op introduced by '-'. */
  ops: string[];
}

/** Parses a reference, or returns null when it is not one. Operations are syntax-checked here. */
export function parseFileRef(text: string): FileRef | null {
  const raw = text.trim();
  if (raw === '' || raw.length > 4096) return null;
  let path: string;
  let isUrl = false;
  if (/^https?:\/\//i.test(raw)) {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return null;
    }
    path = url.pathname;
    isUrl = true;
  } else {
    path = raw;
  }
  const segments = path.split('/').filter((s, i) => !(i === 0 && s === ''));
  const endsWithSlash = path.endsWith('/');
  if (endsWithSlash) segments.pop();
  // In a URL the last segment of a path without a trailing slash is a filename (CDN grammar).
  if (isUrl && !endsWithSlash && segments.length > 1) segments.pop();
  const [head = '', ...ops] = segments;
  const uuid = parseUuid(head);
  if (!uuid) return null;
  if (ops.length > 0 && ops[0] !== '-') return null;
  if (ops.some((s) => s === '')) return null;
  try {
    parsePlan(ops.map((s) => decodeURIComponent(s)));
  } catch {
    return null;
  }
  return { uuid, ops };
}

/** `-/resize/x800/-/preview/` -> `resize/x800/-/preview/`: what `/group/` returns as default_effects. */
export function effectsText(ops: string[]): string {
  if (ops.length === 0) return '';
  return ops.slice(1).join('/') + '/';
}

/** The inverse of effectsText: stored default_effects back to operation segments (decoded). */
export function effectsSegments(effects: string): string[] {
  const parts = effects.split('/').filter((s) => s !== '');
  if (parts.length === 0) return [];
  return ['-', ...parts].map((s) => decodeURIComponent(s));
}

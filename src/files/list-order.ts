/**
 * `GET /files/` ordering and its cursors. v0.7 orders by upload time only; v0.6 also by size
 * (spec "Versioning"), where `from`/`to` hold a size: a plain `<bytes>` the client writes (files of
 * that size and beyond, inclusive) or the `<bytes>~<upload µs>` key our `next`/`previous` links
 * carry (strictly beyond that file, so ties on size page exactly).
 */
import type { RestVersion } from '../core/file-json.js';
import type { SizeKey } from './repo.js';
import type { Query } from '../http/rest/query.js';
import { restFieldErrors } from '../core/error-catalogue/rest-fields.js';

export type FileOrdering = { by: 'uploaded' | 'size'; desc: boolean };

export function fileOrdering(q: Query, version: RestVersion): FileOrdering {
  const v = q['ordering'];
  const allowed = version === '0.6' ? ['datetime_uploaded', 'size'] : ['datetime_uploaded'];
  if (v === undefined || v === '') return { by: 'uploaded', desc: false };
  const desc = v.startsWith('-');
  const field = desc ? v.slice(1) : v;
  if (!allowed.includes(field)) throw restFieldErrors.orderingNotOneOf(allowed);
  return { by: field === 'size' ? 'size' : 'uploaded', desc };
}

/** Beyond any upload time, so a bare size bound takes in every file of that size. */
const LOWEST = -1;
const HIGHEST = Number.MAX_SAFE_INTEGER;

/** `from` (start = true) or `to` as a size key; null when absent. */
export function sizeCursorParam(q: Query, name: 'from' | 'to', desc: boolean): SizeKey | null {
  const v = q[name];
  if (v === undefined || v === '') return null;
  const m = /^(\d{1,15})(?:~(\d{1,16}))?$/.exec(v);
  if (!m) throw restFieldErrors.sizeCursorInvalid(name);
  const size = Number(m[1]);
  if (m[2] !== undefined) return { size, us: Number(m[2]) };
  // `from` starts at the first file of that size in display order; `to` ends after the last one.
  const startsLow = (name === 'from') !== desc;
  return { size, us: startsLow ? LOWEST : HIGHEST };
}

export function formatSizeCursor(key: SizeKey): string {
  return `${key.size}~${key.us}`;
}

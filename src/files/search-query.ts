/**
 * The body of `POST /files/search/` (docs/files.md) -> one typed query, or the validation errors
 * keyed by field (`{"query": ["Must be at least 4 characters."]}`, the shape the JS rest-client's
 * RestClientValidationError reads). Pure: no I/O. Body keys are the ones the JS client sends
 * (`query`, `phrase`, `exact`, `datetime_uploaded`, `size`, `is_image`, `tags`, `sort`,
 * `fuzziness`), plus ours: `stored`, `removed`, `appdata_labels`.
 */
import { parseDateToUs } from '../core/time.js';
import { normalizeTag } from '../core/tags.js';
import { parseUuid } from '../core/ids.js';
import { LABEL_SYNTAX } from '../core/appdata-labels.js';

export interface Range {
  gt?: number;
  gte?: number;
  lt?: number;
  lte?: number;
}

export type SortColumn = 'uploaded_us' | 'size' | 'original_filename';

export interface SearchQuery {
  /** Substring, case-insensitive, across original filename, detected MIME type and metadata values. */
  text: string | null;
  phrase: { filename: string | null; mime: string | null; metadata: string | null };
  exact: { uuids: string[] | null; mimes: string[] | null; filenames: string[] | null; metadata: Array<[string, string[]]> };
  uploaded: Range;
  size: Range;
  isImage: boolean | null;
  tags: { any: string[]; all: string[]; none: string[] };
  stored: boolean | null;
  removed: boolean;
  /** Label names an add-on wrote into appdata (any of them). */
  labels: string[];
  sort: Array<{ column: SortColumn; desc: boolean }>;
}

export type SearchErrors = Record<string, string[]>;

/** A keyset position: the last row's values of each key of searchOrder(). */
export type SearchCursor = Array<string | number>;

const SORTS: Record<string, SortColumn> = { datetime_uploaded: 'uploaded_us', size: 'size', original_filename: 'original_filename', score: 'uploaded_us' };
const KNOWN = new Set(['query', 'phrase', 'exact', 'datetime_uploaded', 'size', 'is_image', 'tags', 'sort', 'fuzziness', 'stored', 'removed', 'appdata_labels']);
const CONDITIONS = ['query', 'phrase', 'exact', 'datetime_uploaded', 'size', 'is_image', 'tags', 'stored', 'removed', 'appdata_labels'];
const MAX_VALUES = 100;

export function parseSearch(body: unknown): { query: SearchQuery } | { errors: SearchErrors } {
  const errors: SearchErrors = {};
  const fail = (field: string, message: string) => (errors[field] ??= []).push(message);
  if (!body || typeof body !== 'object' || Array.isArray(body)) return { errors: { non_field_errors: ['Expected a JSON object.'] } };
  const b = body as Record<string, unknown>;
  for (const key of Object.keys(b)) if (!KNOWN.has(key)) fail(key, 'Unknown field.');
  if (!CONDITIONS.some((c) => b[c] !== undefined)) fail('non_field_errors', `Give at least one condition: ${CONDITIONS.join(', ')}.`);

  const text = (field: string, v: unknown): string | null => {
    if (v === undefined || v === null) return null;
    if (typeof v !== 'string') return fail(field, 'Must be a string.'), null;
    if ([...v.trim()].length < 4) return fail(field, 'Must be at least 4 characters.'), null;
    if (v.length > 256) return fail(field, 'Must be at most 256 characters.'), null;
    return v.trim();
  };
  const list = (field: string, v: unknown, each: (s: string) => string | null = (s) => s): string[] | null => {
    if (v === undefined || v === null) return null;
    if (!Array.isArray(v) || v.length === 0 || v.length > MAX_VALUES || v.some((x) => typeof x !== 'string')) return fail(field, `Must be a list of 1 to ${MAX_VALUES} strings.`), null;
    const out: string[] = [];
    for (const x of v as string[]) {
      const ok = each(x);
      if (ok === null) return fail(field, `Invalid value: ${JSON.stringify(x).slice(0, 80)}.`), null;
      out.push(ok);
    }
    return out;
  };
  const object = (field: string, v: unknown): Record<string, unknown> | null => {
    if (v === undefined || v === null) return null;
    if (typeof v !== 'object' || Array.isArray(v)) return fail(field, 'Must be an object.'), null;
    return v as Record<string, unknown>;
  };
  const range = (field: string, v: unknown, read: (x: unknown) => number | null): Range => {
    const o = object(field, v);
    const out: Range = {};
    if (!o) return out;
    for (const [k, x] of Object.entries(o)) {
      if (k !== 'gt' && k !== 'gte' && k !== 'lt' && k !== 'lte') fail(field, `Unknown bound ${k}: use gt, gte, lt, lte.`);
      else if (x !== undefined) {
        const n = read(x);
        if (n === null) fail(field, `Bad value for ${k}.`);
        else out[k] = n;
      }
    }
    if (Object.keys(out).length === 0 && !errors[field]) fail(field, 'Give at least one of gt, gte, lt, lte.');
    return out;
  };
  const bool = (field: string, v: unknown): boolean | null => {
    if (v === undefined || v === null) return null;
    if (typeof v !== 'boolean') return fail(field, 'Must be true or false.'), null;
    return v;
  };
  const tag = (s: string) => {
    try {
      return normalizeTag(s);
    } catch {
      return null;
    }
  };

  const phrase = object('phrase', b['phrase']) ?? {};
  const exact = object('exact', b['exact']) ?? {};
  const metadataExact: Array<[string, string[]]> = [];
  for (const [k, v] of Object.entries(exact)) {
    const m = /^metadata\[([\w\-.:]{1,64})\]$/.exec(k);
    if (m) {
      const values = list(`exact.${k}`, v);
      if (values) metadataExact.push([m[1] as string, values]);
    } else if (!['uuid', 'detected_mime_type', 'original_filename'].includes(k)) fail('exact', `Unknown field ${k}.`);
  }
  for (const k of Object.keys(phrase)) if (!['original_filename', 'detected_mime_type', 'metadata'].includes(k)) fail('phrase', `Unknown field ${k}.`);
  const tags = object('tags', b['tags']) ?? {};
  for (const k of Object.keys(tags)) if (!['any', 'all', 'none'].includes(k)) fail('tags', `Unknown field ${k}: use any, all, none.`);

  const sort: SearchQuery['sort'] = [];
  if (b['sort'] !== undefined) {
    const raw = list('sort', b['sort']);
    if (raw && raw.length > 4) fail('sort', 'At most 4 sort keys.');
    for (const token of raw ?? []) {
      const desc = token.startsWith('-');
      const column = SORTS[desc ? token.slice(1) : token];
      if (!column) fail('sort', `Unknown sort key ${token}: use ${Object.keys(SORTS).join(', ')} (- for descending).`);
      else if (!sort.some((s) => s.column === column)) sort.push({ column, desc });
    }
  }
  if (sort.length === 0) sort.push({ column: 'uploaded_us', desc: true });

  const query: SearchQuery = {
    text: text('query', b['query']),
    phrase: {
      filename: text('phrase.original_filename', phrase['original_filename']),
      mime: text('phrase.detected_mime_type', phrase['detected_mime_type']),
      metadata: text('phrase.metadata', phrase['metadata']),
    },
    exact: {
      uuids: list('exact.uuid', exact['uuid'], parseUuid),
      mimes: list('exact.detected_mime_type', exact['detected_mime_type'], (s) => s.toLowerCase()),
      filenames: list('exact.original_filename', exact['original_filename']),
      metadata: metadataExact,
    },
    uploaded: range('datetime_uploaded', b['datetime_uploaded'], (x) => (typeof x === 'string' ? parseDateToUs(x) : null)),
    size: range('size', b['size'], (x) => (typeof x === 'number' && Number.isFinite(x) && x >= 0 ? Math.floor(x) : null)),
    isImage: bool('is_image', b['is_image']),
    tags: { any: list('tags.any', tags['any'], tag) ?? [], all: list('tags.all', tags['all'], tag) ?? [], none: list('tags.none', tags['none'], tag) ?? [] },
    stored: bool('stored', b['stored']),
    removed: bool('removed', b['removed']) ?? false,
    labels: list('appdata_labels', b['appdata_labels'], (s) => (LABEL_SYNTAX.test(s) ? s : null)) ?? [],
    sort,
  };
  if (phrase['original_filename'] !== undefined && exact['original_filename'] !== undefined) fail('phrase', 'original_filename can not be in both phrase and exact.');
  if (phrase['detected_mime_type'] !== undefined && exact['detected_mime_type'] !== undefined) fail('phrase', 'detected_mime_type can not be in both phrase and exact.');
  if (b['fuzziness'] !== undefined && typeof b['fuzziness'] !== 'boolean') fail('fuzziness', 'Must be true or false.');
  return Object.keys(errors).length > 0 ? { errors } : { query };
}

/** The sort keys a page is ordered by: the query's, then uploaded_us (unique per project) to break ties. */
export function searchOrder(q: SearchQuery): Array<{ column: SortColumn; desc: boolean }> {
  return q.sort.some((k) => k.column === 'uploaded_us') ? q.sort : [...q.sort, { column: 'uploaded_us', desc: q.sort[0]?.desc ?? true }];
}

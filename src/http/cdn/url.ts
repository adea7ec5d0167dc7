/**
 * CDN URL -> one typed request, parsed once and before any byte is read (cdn-url-api.md,
 * wire-reference §3.1):
 *   /<uuid>/[<filename>]
 *   /<uuid>/-/<op>/<params>/…/[<filename>]        (also /<uuid>/gif2video/…, /<uuid>/detect_faces/)
 *   /<group_uuid>~<N>/                            the group's page
 *   /<group_uuid>~<N>/nth/<i>/[-/<op>/…/][<filename>]
 *   /<group_uuid>~<N>/archive/zip|tar/[<filename>]
 *   /<uuid>/document/-/format/<fmt>/…, /<uuid>/video/…   the result of a finished REST conversion
 * A path that ends without `/` carries a filename as its last segment (one RFC 3986 pchar segment).
 * Empty segments (`//`) are ignored, as the public CDN does (the Python SDK sends
 * `/<uuid>/detect_faces//`), so they never reach the plan or its cache key.
 * A mistake in the URL is an AppError: 404 for a path that names nothing, 400 for bad operations.
 *
 * CDN traffic repeats the same few URLs: parsed requests are kept by path (bounded, frozen so no
 * handler can change what the next request gets), and a repeated URL costs one map lookup.
 */
import { parseUuid } from '../../core/ids.js';
import { parsePlan } from '../../media/plan.js';
import type { CdnRequest, GroupView } from '../../feature.js';
import { cdnErrors } from '../../core/error-catalogue/media.js';

const PCHAR = /^(?:[A-Za-z0-9\-._~!$&'()*+,;=:@]|%[0-9A-Fa-f]{2})+$/;
const GROUP_ID = /^([0-9a-fA-F-]{36})~(\d{1,4})$/;
const badUrl = cdnErrors.invalidUrl;

/** Paths kept (longer ones are parsed every time: they would make the map large). */
const PARSED_MAX = 4096;
const PARSED_PATH_MAX = 512;
const parsed = new Map<string, CdnRequest>();

export function parseCdnPath(rawPath: string): CdnRequest {
  const known = parsed.get(rawPath);
  if (known) return known;
  const request = parsePath(rawPath);
  if (rawPath.length <= PARSED_PATH_MAX) {
    if (parsed.size >= PARSED_MAX) parsed.clear();
    parsed.set(rawPath, deepFreeze(request));
  }
  return request;
}

function parsePath(rawPath: string): CdnRequest {
  if (!rawPath.startsWith('/')) throw cdnErrors.notFound();
  const segments = rawPath.split('/').filter((s) => s !== '');
  const head = segments.shift() ?? '';
  let filename: string | null = null;
  if (!rawPath.endsWith('/') && segments.length > 0) {
    const last = segments.pop() as string;
    if (!PCHAR.test(last)) throw badUrl('The filename must be a valid URL path segment; percent-encode other characters.');
    filename = decode(last);
  }
  const group = GROUP_ID.exec(head);
  if (group) {
    const uuid = parseUuid(group[1] ?? '');
    if (!uuid) throw cdnErrors.notFound();
    return { kind: 'group', groupId: `${uuid}~${Number(group[2])}`, view: groupView(segments.map(decode), filename), filename };
  }
  const uuid = parseUuid(head);
  if (!uuid) throw cdnErrors.notFound();
  const first = segments[0];
  if (first === 'document' || first === 'video') return { kind: 'conversion', uuid, conversion: first, path: `${uuid}/${segments.join('/')}/`, filename };
  return { kind: 'file', uuid, plan: parsePlan(segments.map(decode)), filename, written: segments };
}

function groupView(rest: string[], filename: string | null): GroupView {
  const [head, arg, ...ops] = rest;
  if (head === undefined) {
    if (filename !== null) throw cdnErrors.notFound();
    return { kind: 'page' };
  }
  if (head === 'nth' && arg !== undefined) {
    if (!/^\d{1,4}$/.test(arg)) throw cdnErrors.noGroupIndex();
    if (ops.length > 0 && ops[0] !== '-') throw badUrl('Operations after nth/<i>/ must start with "-/".');
    return { kind: 'nth', index: Number(arg), plan: parsePlan(ops) };
  }
  if (head === 'archive' && (arg === 'zip' || arg === 'tar') && ops.length === 0) return { kind: 'archive', format: arg };
  throw cdnErrors.notFound();
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw badUrl('Malformed percent-encoding in the URL.');
  }
}

/** Freezes plain objects and arrays all the way down (operation arguments included). */
function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  const proto: unknown = Object.getPrototypeOf(value);
  if (!Array.isArray(value) && proto !== Object.prototype && proto !== null) return value;
  for (const v of Object.values(value)) deepFreeze(v);
  return Object.freeze(value);
}

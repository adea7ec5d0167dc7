/**
 * CDN URL shapes (cdn-url-api.md, wire-reference §3.1), parsed before any byte is read:
 *   /<uuid>/[<filename>]
 *   /<uuid>/-/<op>/<params>/…/[<filename>]
 *   /<group_uuid>~<N>/… (groups)
 * A path that ends without `/` carries a filename as its last segment (one RFC 3986 pchar segment).
 */
import { parseUuid } from '../../core/ids.js';

export type CdnTarget =
  | { kind: 'file'; uuid: string; ops: string[]; filename: string | null; /** e.g. 'gif2video', 'detect_faces' */ special: string | null }
  | { kind: 'group'; groupId: string; rest: string[]; filename: string | null };

export class CdnUrlError extends Error {
  constructor(readonly status: 400 | 404, message: string) {
    super(message);
  }
}

const PCHAR = /^(?:[A-Za-z0-9\-._~!$&'()*+,;=:@]|%[0-9A-Fa-f]{2})+$/;
const GROUP_ID = /^([0-9a-fA-F-]{36})~(\d{1,4})$/;

export function parseCdnPath(rawPath: string): CdnTarget {
  if (!rawPath.startsWith('/')) throw new CdnUrlError(404, 'Not found');
  const endsWithSlash = rawPath.endsWith('/');
  const segments = rawPath.slice(1).split('/');
  if (endsWithSlash) segments.pop();
  const [head = '', ...rest] = segments;
  let filename: string | null = null;
  if (!endsWithSlash && rest.length > 0) {
    const last = rest.pop() as string;
    if (!PCHAR.test(last)) throw new CdnUrlError(400, 'The filename must be a valid URL path segment; percent-encode other characters.');
    filename = decode(last);
  }
  const decoded = rest.map(decode);
  const group = GROUP_ID.exec(head);
  if (group) {
    const uuid = parseUuid(group[1] ?? '');
    if (!uuid) throw new CdnUrlError(404, 'Not found');
    return { kind: 'group', groupId: `${uuid}~${Number(group[2])}`, rest: decoded, filename };
  }
  const uuid = parseUuid(head);
  if (!uuid) throw new CdnUrlError(404, 'Not found');
  let special: string | null = null;
  let ops = decoded;
  if (ops.length > 0 && ops[0] !== '-') {
    special = ops[0] ?? null;
    ops = ops.slice(1);
  }
  if (ops.some((s) => s === '')) throw new CdnUrlError(400, 'Empty path segment in the operations.');
  return { kind: 'file', uuid, ops, filename, special };
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new CdnUrlError(400, 'Malformed percent-encoding in the URL.');
  }
}

/**
 * Cursor pagination as the public service does it (wire-reference §2.4): `next` carries `from` =
 * the last item's time, `previous` carries `to` = the first item's time, both exclusive, plus
 * `offset=0`. Item times are unique per project (see FileService), so the cursor alone is exact and
 * clients that drop `offset`/`to` still walk without duplicates or gaps.
 */
import { formatCursor } from '../../core/time.js';

export interface PageLinks {
  next: string | null;
  previous: string | null;
}

/**
 * @param userParams the request's own parameters, in their order, without from/to/offset
 */
export function pageLinks(base: string, userParams: Array<[string, string]>, firstUs: number | null, lastUs: number | null, hasNext: boolean, hasPrevious: boolean): PageLinks {
  const build = (cursor: [string, string]): string => {
    const params = new URLSearchParams();
    if (cursor[0] === 'from') params.append(...cursor);
    for (const [k, v] of userParams) params.append(k, v);
    if (cursor[0] === 'to') params.append(...cursor);
    params.append('offset', '0');
    return `${base}?${params.toString()}`;
  };
  return {
    next: hasNext && lastUs !== null ? build(['from', formatCursor(lastUs)]) : null,
    previous: hasPrevious && firstUs !== null ? build(['to', formatCursor(firstUs)]) : null,
  };
}

export function userParams(query: Record<string, string | undefined>): Array<[string, string]> {
  return Object.entries(query).filter((e): e is [string, string] => e[1] !== undefined && !['from', 'to', 'offset'].includes(e[0]));
}

export interface CursorPage<T> {
  page: T[];
  firstUs: number | null;
  lastUs: number | null;
  hasNext: boolean;
  hasPrevious: boolean;
}

/**
 * One page of a time-ordered list for `from`/`to` cursors. `fetch` lists rows strictly after
 * `afterUs` / before `beforeUs` in display order. One extra row tells whether a further page exists
 * in the walking direction; the other direction is probed with a one-row fetch.
 */
export async function cursorPage<T>(
  q: { limit: number; fromUs: number | null; toUs: number | null },
  fetch: (afterUs: number | null, beforeUs: number | null, limit: number) => Promise<T[]>,
  timeOf: (row: T) => number,
): Promise<CursorPage<T>> {
  const rows = await fetch(q.fromUs, q.toUs, q.limit + 1);
  const walkingBack = q.toUs !== null && q.fromUs === null;
  const more = rows.length > q.limit;
  const page = more ? (walkingBack ? rows.slice(1) : rows.slice(0, q.limit)) : rows;
  const first = page[0];
  const last = page[page.length - 1];
  const firstUs = first === undefined ? null : timeOf(first);
  const lastUs = last === undefined ? null : timeOf(last);
  const exists = async (afterUs: number | null, beforeUs: number | null) => (await fetch(afterUs, beforeUs, 1)).length > 0;
  const hasNext = walkingBack ? lastUs !== null && (await exists(lastUs, null)) : more;
  const hasPrevious = walkingBack ? more : firstUs !== null && q.fromUs !== null && (await exists(null, firstUs));
  return { page, firstUs, lastUs, hasNext, hasPrevious };
}

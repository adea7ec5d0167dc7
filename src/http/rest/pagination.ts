/**
 * Cursor pagination as the public service does it (wire-reference §2.4): `next` carries `from` =
 * the last item's time, `previous` carries `to` = the first item's time, both exclusive, plus
 * `offset=0`. Item times are unique per project (see FileService), so the cursor alone is exact and
 * clients that drop `offset`/`to` still walk without duplicates or gaps.
 */
export interface PageLinks {
  next: string | null;
  previous: string | null;
}

/**
 * @param userParams the request's own parameters, in their order, without from/to/offset
 * @param format writes a row's key as the `from`/`to` value (formatCursor for a time)
 */
export function pageLinks<K = number>(
  base: string,
  userParams: Array<[string, string]>,
  first: K | null,
  last: K | null,
  hasNext: boolean,
  hasPrevious: boolean,
  format: (key: K) => string,
): PageLinks {
  const build = (cursor: [string, string]): string => {
    const params = new URLSearchParams();
    if (cursor[0] === 'from') params.append(...cursor);
    for (const [k, v] of userParams) params.append(k, v);
    if (cursor[0] === 'to') params.append(...cursor);
    params.append('offset', '0');
    return `${base}?${params.toString()}`;
  };
  return {
    next: hasNext && last !== null ? build(['from', format(last)]) : null,
    previous: hasPrevious && first !== null ? build(['to', format(first)]) : null,
  };
}

export function userParams(query: Record<string, string | undefined>): Array<[string, string]> {
  return Object.entries(query).filter((e): e is [string, string] => e[1] !== undefined && !['from', 'to', 'offset'].includes(e[0]));
}

export interface CursorPage<T, K = number> {
  page: T[];
  first: K | null;
  last: K | null;
  hasNext: boolean;
  hasPrevious: boolean;
}

/**
 * One page of a keyset-ordered list for `from`/`to` cursors (a time, or v0.6's size key). `fetch`
 * lists rows strictly after `after` / before `before` in display order. One extra row tells whether
 * a further page exists in the walking direction; the other direction is probed with a one-row fetch.
 */
export async function cursorPage<T, K = number>(
  q: { limit: number; from: K | null; to: K | null },
  fetch: (after: K | null, before: K | null, limit: number) => Promise<T[]>,
  keyOf: (row: T) => K,
): Promise<CursorPage<T, K>> {
  return cursorPageOf(q, await fetch(q.from, q.to, rowsForPage(q.limit)), fetch, keyOf);
}

/** The rows a page's own fetch asks for: one more than the page tells whether another follows. */
export function rowsForPage(limit: number): number {
  return limit + 1;
}

/**
 * `cursorPage` from rows the caller fetched itself, `rowsForPage(q.limit)` of them from `q.from` /
 * `q.to` (with something read alongside: a list's counters); `fetch` probes the other direction.
 */
export async function cursorPageOf<T, K = number>(
  q: { limit: number; from: K | null; to: K | null },
  rows: T[],
  fetch: (after: K | null, before: K | null, limit: number) => Promise<T[]>,
  keyOf: (row: T) => K,
): Promise<CursorPage<T, K>> {
  const walkingBack = q.to !== null && q.from === null;
  const more = rows.length > q.limit;
  const page = more ? (walkingBack ? rows.slice(1) : rows.slice(0, q.limit)) : rows;
  const first = page[0];
  const last = page[page.length - 1];
  const firstKey = first === undefined ? null : keyOf(first);
  const lastKey = last === undefined ? null : keyOf(last);
  const exists = async (after: K | null, before: K | null) => (await fetch(after, before, 1)).length > 0;
  const hasNext = walkingBack ? lastKey !== null && (await exists(lastKey, null)) : more;
  const hasPrevious = walkingBack ? more : firstKey !== null && q.from !== null && (await exists(null, firstKey));
  return { page, first: firstKey, last: lastKey, hasNext, hasPrevious };
}

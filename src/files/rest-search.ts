/**
 * REST: POST /files/search/ (JS rest-client `searchFiles`; query language in docs/files.md).
 * Query string: `limit` (1..100, default 20), `offset` (offset + limit <= 1000, as the client's
 * paginator expects), `include=appdata`, `cursor` (keyset: the `next` link's, no depth limit).
 * Validation errors answer 400 with `{field: [messages]}`, the shape the client parses.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import type { FileRecord } from '../core/file-record.js';
import { restFileFor } from '../core/file-json-v06.js';
import { jsonBody, sendJson } from '../http/common/json.js';
import { restRoute } from '../http/rest/route.js';
import { jsonObject, restFileJson as restFileSchema, restPage } from '../http/common/openapi/wire-schemas.js';
import { parseSearch, searchOrder, type SearchCursor, type SearchErrors, type SearchQuery } from './search-query.js';

const MAX_DEPTH = 1000;

// Strings here: the route reports every bad parameter at once as `{field: [messages]}` (below).
const searchQuery = z.object({
  limit: z.string().optional().meta({ description: 'Page size, 1 to 100 (default 20).' }),
  offset: z.string().optional().meta({ description: `Offset of the page; offset + limit <= ${MAX_DEPTH} (deeper: follow \`next\`).` }),
  include: z.string().optional().meta({ description: '`appdata` to include add-on results.' }),
  cursor: z.string().optional().meta({ description: "The `next` link's cursor (keyset pages, no depth limit)." }),
});

const fieldErrors = z.record(z.string(), z.array(z.string())).meta({ description: 'Every invalid field with its messages.' });

const searchSpec = {
  method: 'POST',
  url: '/files/search/',
  tags: ['Files'],
  summary: 'Search files',
  description: 'The query language is in docs/files.md (`{"query": …, "order": …}`).',
  query: searchQuery,
  body: { schema: jsonObject.meta({ description: 'The search (docs/files.md).' }), documentOnly: true },
  responses: { 200: { description: 'A page of matching files.', schema: restPage(restFileSchema) }, 400: { description: 'Invalid fields.', schema: fieldErrors } },
} as const;

export function searchRoutes(ctx: AppContext) {
  return async function plugin(app: FastifyInstance): Promise<void> {
    restRoute(app, searchSpec, async (req, reply, { query: q }) => {
      const errors: SearchErrors = {};
      const limit = intOf(q['limit'], 20);
      const offset = intOf(q['offset'], 0);
      if (limit === null || limit < 1 || limit > 100) errors['limit'] = ['Must be an integer from 1 to 100.'];
      if (offset === null) errors['offset'] = ['Must be a non-negative integer.'];
      const include = q['include'];
      if (include !== undefined && include !== '' && include !== 'appdata') errors['include'] = ['Only appdata can be included.'];
      const parsed = parseSearch(jsonBody(req));
      if ('errors' in parsed) Object.assign(errors, parsed.errors);
      const query = 'query' in parsed ? parsed.query : null;
      const cursor = query && q['cursor'] ? decodeCursor(q['cursor'], query) : null;
      if (query && q['cursor'] && !cursor) errors['cursor'] = ['Invalid cursor: use the next link of the same search.'];
      if (!cursor && limit !== null && offset !== null && offset + limit > MAX_DEPTH) errors['offset'] = [`offset + limit must not exceed ${MAX_DEPTH}; follow the next link's cursor to go deeper.`];
      if (Object.keys(errors).length > 0 || !query || limit === null || offset === null) return sendJson(reply, 400, errors);

      const [rows, total] = await Promise.all([
        ctx.files.search(req.projectId, query, { limit: limit + 1, offset, cursor }),
        ctx.files.searchCount(req.projectId, query),
      ]);
      const page = rows.slice(0, limit);
      const last = page[page.length - 1];
      const base = `${ctx.bases.rest}/files/search/`;
      const extra = include ? `&include=${include}` : '';
      const next = rows.length > limit && last ? `${base}?limit=${limit}&offset=${offset + limit}${extra}&cursor=${encodeCursor(query, last)}` : null;
      const previous = !cursor && offset > 0 ? `${base}?limit=${limit}&offset=${Math.max(0, offset - limit)}${extra}` : null;
      return sendJson(reply, 200, {
        next,
        previous,
        total,
        per_page: limit,
        results: page.map((f) => restFileFor(req.apiVersion, f, ctx.bases, include === 'appdata')),
      });
    });
  };
}

function intOf(v: string | undefined, dflt: number): number | null {
  if (v === undefined || v === '') return dflt;
  return /^\d{1,9}$/.test(v) ? Number(v) : null;
}

/** The cursor names its sort, so a cursor from another search's order is refused, not misread. */
function signature(q: SearchQuery): string {
  return searchOrder(q).map((k) => `${k.desc ? '-' : ''}${k.column}`).join(',');
}

function encodeCursor(q: SearchQuery, f: FileRecord): string {
  const values = searchOrder(q).map((k) => (k.column === 'uploaded_us' ? f.uploadedUs : k.column === 'size' ? f.size : f.originalFilename));
  return Buffer.from(JSON.stringify({ s: signature(q), v: values })).toString('base64url');
}

function decodeCursor(text: string, q: SearchQuery): SearchCursor | null {
  try {
    const c = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as { s?: unknown; v?: unknown };
    const order = searchOrder(q);
    if (c.s !== signature(q) || !Array.isArray(c.v) || c.v.length !== order.length) return null;
    const v = c.v as unknown[];
    const ok = order.every((k, i) => (k.column === 'original_filename' ? typeof v[i] === 'string' : Number.isSafeInteger(v[i])));
    return ok ? (v as SearchCursor) : null;
  } catch {
    return null;
  }
}

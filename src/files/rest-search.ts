/**
 * REST: POST /files/search/ (JS rest-client `searchFiles`; query language in docs/files.md).
 * Query string: `limit` (1..100, default 20), `offset` (offset + limit <= 1000, as the client's
 * paginator expects), `include=appdata`, `cursor` (keyset: the `next` link's, no depth limit).
 * Validation errors answer 400 with `{field: [messages]}`, the shape the client parses: the route
 * is `deferred`, its handler runs the documented schemas and adds the cross-field checks.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { FilesContext } from './context.js';
import type { FileRecord } from '../core/file-record.js';
import { restFileFor } from '../core/file-json-v06.js';
import { jsonBody, sendJson } from '../http/common/json.js';
import { checked, fieldErrors, inputIssues } from '../http/common/route.js';
import { queryOf } from '../http/rest/query.js';
import { restRoute } from '../http/rest/route.js';
import { anyRestFileSchema as restFileSchema, restPage } from '../http/common/openapi/wire-schemas.js';
import { parseSearch, searchOrder, type SearchCursor, type SearchErrors, type SearchQuery } from './search-query.js';
import type { AppError } from '../core/errors.js';
import { restErrors } from '../core/error-catalogue/rest.js';
import { restFieldErrors } from '../core/error-catalogue/rest-fields.js';

const MAX_DEPTH = 1000;

/** An integer query parameter: absent or empty is `dflt`. */
function intOf(v: string | undefined, dflt: number, invalid: () => AppError): number {
  if (v === undefined || v === '') return dflt;
  if (!/^\d{1,9}$/.test(v)) throw invalid();
  return Number(v);
}

/*
 * The route is `deferred`: the handler runs these schemas itself, because every bad field (query,
 * body, and the cross-field cursor and depth checks) is answered at once as `{field: [messages]}`.
 */
const searchQuery = z.object({
  limit: checked(z.string().optional(), (v) => {
    const n = intOf(v, 20, restFieldErrors.searchLimitOutOfRange);
    if (n < 1 || n > 100) throw restFieldErrors.searchLimitOutOfRange();
    return n;
  }).meta({ type: 'integer', minimum: 1, maximum: 100, description: 'Page size, 1 to 100 (default 20).' }),
  offset: checked(z.string().optional(), (v) => intOf(v, 0, restFieldErrors.searchOffsetNegative)).meta({ type: 'integer', minimum: 0, description: `Offset of the page; offset + limit <= ${MAX_DEPTH} (deeper: follow \`next\`).` }),
  include: checked(z.string().optional(), (v) => {
    if (v !== undefined && v !== '' && v !== 'appdata') throw restFieldErrors.searchIncludeOnlyAppdata();
    return v === 'appdata' ? v : undefined;
  }).meta({ type: 'string', enum: ['appdata'], description: '`appdata` to include add-on results.' }),
  cursor: z.string().optional().meta({ description: "The `next` link's cursor (keyset pages, no depth limit)." }),
});

/** The search itself: parseSearch's errors become one issue per field message. */
const searchBody = z
  .unknown()
  .transform((v, ctx) => {
    const parsed = parseSearch(v);
    if ('query' in parsed) return parsed.query;
    for (const [field, messages] of Object.entries(parsed.errors)) for (const message of messages) ctx.addIssue({ code: 'custom', message, path: [field] });
    return z.NEVER;
  })
  .meta({ type: 'object', description: 'The search (docs/files.md).' });

const fieldErrorsJson = z.record(z.string(), z.array(z.string())).meta({ description: 'Every invalid field with its messages.' });

const searchSpec = {
  method: 'POST',
  url: '/files/search/',
  tags: ['Files'],
  summary: 'Search files',
  description: 'The query language is in docs/files.md (`{"query": …, "order": …}`).',
  query: searchQuery,
  body: { schema: searchBody },
  deferred: true,
  responses: { 200: { description: 'A page of matching files.', schema: restPage(restFileSchema) }, 400: { description: 'Invalid fields.', schema: fieldErrorsJson } },
} as const;

export function searchRoutes(ctx: FilesContext) {
  return async function plugin(app: FastifyInstance): Promise<void> {
    restRoute(app, searchSpec, async (req, reply) => {
      const raw = queryOf(req.query);
      const q = inputIssues(searchQuery, raw);
      const parsed = inputIssues(searchBody, jsonBody(req));
      // Body errors replace a query parameter's of the same name, as they always have.
      const errors: SearchErrors = { ...(q.ok ? {} : fieldErrors(q.issues)), ...(parsed.ok ? {} : fieldErrors(parsed.issues)) };
      const query = parsed.ok ? parsed.data : null;
      const cursor = query && raw['cursor'] ? decodeCursor(raw['cursor'], query) : null;
      if (query && raw['cursor'] && !cursor) errors['cursor'] = ['Invalid cursor: use the next link of the same search.'];
      // The depth limit needs only `limit` and `offset` valid, whatever else is wrong.
      const limit = validField('limit', raw);
      const offset = validField('offset', raw);
      if (!cursor && limit !== null && offset !== null && offset + limit > MAX_DEPTH) errors['offset'] = [`offset + limit must not exceed ${MAX_DEPTH}; follow the next link's cursor to go deeper.`];
      if (Object.keys(errors).length > 0 || !query || !q.ok || limit === null || offset === null) throw restErrors.fieldErrors(errors);
      const include = q.data.include;
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

/** One page parameter's value, or null when it is invalid. */
function validField(name: 'limit' | 'offset', raw: Record<string, string | undefined>): number | null {
  const r = searchQuery.shape[name].safeParse(raw[name]);
  return r.success ? r.data : null;
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

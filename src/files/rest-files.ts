/**
 * REST: list, info, store, delete and the batch forms of store and delete. File objects are shaped
 * in the request's API version (core/file-json-v06.ts); v0.6 adds `ordering=size` and
 * `DELETE /files/{uuid}/`.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { formatCursor } from '../core/time.js';
import { apiInitiator } from '../jobs/file-events.js';
import type { FilesContext } from './context.js';
import type { FileRecord } from '../core/file-record.js';
import type { RestVersion } from '../core/file-json.js';
import { restFileFor } from '../core/file-json-v06.js';
import { jsonBytes, sendJson, sendJsonBytes } from '../http/common/json.js';
import { RenderedPerRecord } from './rendered.js';
import { parsedField } from '../http/common/route.js';
import { notFoundAnswer, restRoute } from '../http/rest/route.js';
import { anyRestFileSchema as restFileSchema, restPage } from '../http/common/openapi/wire-schemas.js';
import { fileParams } from './rest-params.js';
import { dateParam, queryOf } from '../http/rest/query.js';
import { infoExtrasOf, infoQueryV07, listQueryOf, listQueryV07 } from './list-query.js';
import { cursorPage, cursorPageOf, pageLinks, rowsForPage, userParams, type PageLinks } from '../http/rest/pagination.js';
import { requireVersion } from '../http/rest/version.js';
import { formatSizeCursor, sizeCursorParam } from './list-order.js';
import { restErrors } from '../core/error-catalogue/rest.js';

const MAX_BATCH = 100;
const FILES = ['Files'];

const LIST_SPEC = {
  method: 'GET',
  url: '/files/',
  tags: FILES,
  summary: "List the project's files",
  description: 'Cursor pages (wire-reference §2.4): follow `next` / `previous`. API v0.6 also takes `ordering=size` / `-size` (then `from` / `to` are sizes) and spells `include=appdata` as `add_fields=rekognition_info`.',
  query: listQueryV07,
  // Version-dependent: the handler validates with its version's schema (list-query.ts).
  deferred: true,
  responses: { 200: { description: 'A page of files.', schema: restPage(restFileSchema).extend({ totals: z.object({ removed: z.number().int(), stored: z.number().int(), unstored: z.number().int() }) }) } },
} as const;

const batchBody = parsedField({ type: 'array', items: { type: 'string' }, maxItems: MAX_BATCH, description: 'File UUIDs.' }, batchIds);
const batchJson = z.object({ status: z.literal('ok'), problems: z.record(z.string(), z.string()), result: z.array(restFileSchema) });

/**
 * A file's info as `GET /files/{uuid}/` sends it, rendered once per record and variant: a record
 * from the node's cache is the same object on every hit until the file changes (record-cache.ts);
 * the URL bases are fixed. One per node, shared by the route and its quick read (info-quick-read.ts).
 */
export function fileInfoAnswers(ctx: FilesContext) {
  const rendered = new RenderedPerRecord();
  return (version: RestVersion, file: Readonly<FileRecord>, extras: boolean): Buffer =>
    rendered.get(file, `${version}:${extras}`, () => jsonBytes(restFileFor(version, file, ctx.bases, extras)));
}

/**
 * A file as the list shows it, rendered once per record and variant (JSON text): a row the list
 * reads again unchanged is the same record (list/record-versions.ts).
 */
function listedFiles(ctx: FilesContext) {
  const rendered = new RenderedPerRecord<string>();
  return (version: RestVersion, file: Readonly<FileRecord>, extras: boolean): string =>
    rendered.get(file, `${version}:${extras}`, () => JSON.stringify(restFileFor(version, file, ctx.bases, extras)));
}

export function fileRoutes(ctx: FilesContext, infoAnswer = fileInfoAnswers(ctx)) {
  return async function plugin(app: FastifyInstance): Promise<void> {
    const json = (req: FastifyRequest, f: FileRecord, extras = false) => restFileFor(req.apiVersion, f, ctx.bases, extras);
    // A client's removal can be taken back by storing the file again, for a while (docs/files.md).
    const byRequest = { restoreMs: ctx.config.restoreWindowMs };
    const listed = listedFiles(ctx);

    restRoute(app, LIST_SPEC, async (req, reply) => {
      const q = queryOf(req.query);
      const { removed, stored, limit, ordering: order, extras, tags } = listQueryOf(req.apiVersion, q);
      const base = { projectId: req.projectId, removed, stored, desc: order.desc, tags };
      const url = `${ctx.bases.rest}/files/`;
      let result: ListAnswer;
      if (order.by === 'size') {
        const p = await cursorPage(
          { limit, from: sizeCursorParam(q, 'from', order.desc), to: sizeCursorParam(q, 'to', order.desc) },
          (after, before, n) => ctx.files.listBySize({ ...base, limit: n, after, before }),
          (f) => ({ size: f.size, us: f.uploadedUs }),
        );
        const links = pageLinks(url, userParams(q), p.first, p.last, p.hasNext, p.hasPrevious, formatSizeCursor);
        result = { page: p.page, links, ...(await ctx.files.countAndTotals({ projectId: req.projectId, removed, stored, tags })) };
      } else {
        const cursors = { limit, from: dateParam(q, 'from'), to: dateParam(q, 'to') };
        const query = (afterUs: number | null, beforeUs: number | null, n: number) => ({ ...base, limit: n, afterUs, beforeUs });
        // The page comes with `total` and `totals`: one round trip on PostgreSQL (list/repo.ts).
        const { records, total, totals } = await ctx.files.listWithTotals(query(cursors.from, cursors.to, rowsForPage(limit)));
        const p = await cursorPageOf(cursors, records, (afterUs, beforeUs, n) => ctx.files.list(query(afterUs, beforeUs, n)), (f) => f.uploadedUs);
        const links = pageLinks(url, userParams(q), p.first, p.last, p.hasNext, p.hasPrevious, formatCursor);
        result = { page: p.page, links, total, totals };
      }
      const head = { next: result.links.next, previous: result.links.previous, total: result.total, totals: result.totals, per_page: limit };
      return sendJsonBytes(reply, 200, withResults(head, result.page.map((f) => listed(req.apiVersion, f, extras))));
    });

    restRoute(app, { method: 'GET', url: '/files/:uuid/', tags: FILES, summary: "A file's info", params: fileParams, query: infoQueryV07, deferred: true, responses: { 200: { description: 'The file.', schema: restFileSchema }, 404: notFoundAnswer('File') } }, async (req, reply) => {
      const extras = infoExtrasOf(req.apiVersion, queryOf(req.query));
      const file = await ctx.files.get(req.projectId, uuidOf(req));
      return sendJsonBytes(reply, 200, infoAnswer(req.apiVersion, file, extras));
    });

    restRoute(app, { method: 'PUT', url: '/files/:uuid/storage/', tags: FILES, summary: 'Store a file', params: fileParams, responses: { 200: { description: 'The stored file.', schema: restFileSchema }, 404: notFoundAnswer('File') } }, async (req, reply) => {
      const file = await ctx.files.store(req.projectId, uuidOf(req), apiInitiator(req.id));
      return sendJson(reply, 200, json(req, file, true));
    });

    const remove = async (req: FastifyRequest, reply: FastifyReply) => {
      const file = await ctx.files.remove(req.projectId, uuidOf(req), apiInitiator(req.id), byRequest);
      return sendJson(reply, 200, json(req, file, true));
    };
    restRoute(app, { method: 'DELETE', url: '/files/:uuid/storage/', tags: FILES, summary: 'Delete a file', params: fileParams, responses: { 200: { description: 'The removed file.', schema: restFileSchema }, 404: notFoundAnswer('File') } }, remove);
    // v0.6's older spelling of the same delete; v0.7 dropped it.
    restRoute(app, { method: 'DELETE', url: '/files/:uuid/', tags: FILES, summary: 'Delete a file (API v0.6 only; v0.7: DELETE /files/{uuid}/storage/)', params: fileParams, responses: { 200: { description: 'The removed file.', schema: restFileSchema }, 404: notFoundAnswer('File') } }, async (req, reply) => {
      requireVersion(req.apiVersion, '0.6');
      return remove(req, reply);
    });

    for (const [method, action] of [['PUT', 'store'], ['DELETE', 'remove']] as const) {
      restRoute(
        app,
        {
          method,
          url: '/files/storage/',
          tags: FILES,
          summary: action === 'store' ? 'Store files in a batch' : 'Delete files in a batch',
          body: { schema: batchBody },
          responses: { 200: { description: 'The files changed, and a problem per UUID that was not.', schema: batchJson } },
        },
        async (req, reply, { body }) => {
          const { problems, result } = await ctx.files.batch(req.projectId, body, action, apiInitiator(req.id), byRequest);
          return sendJson(reply, 200, { status: 'ok', problems, result: result.map((f) => json(req, f, true)) });
        },
      );
    }
  };
}

/**
 * `jsonBytes({ ...head, results })` where each result is already JSON text: the same bytes, as
 * JSON.stringify writes no spaces and `head` (never empty) ends with its last field.
 */
function withResults(head: Record<string, unknown>, results: readonly string[]): Buffer {
  return Buffer.from(`${JSON.stringify(head).slice(0, -1)},"results":[${results.join(',')}]}`);
}

/** What a list answer is made of, whichever the order. */
interface ListAnswer {
  page: FileRecord[];
  links: PageLinks;
  total: number;
  totals: { removed: number; stored: number; unstored: number };
}

function uuidOf(req: FastifyRequest): string {
  return (req.params as { uuid: string }).uuid;
}

function batchIds(body: unknown): string[] {
  if (!Array.isArray(body) || body.some((x) => typeof x !== 'string')) throw restErrors.batchNotList();
  if (body.length === 0) throw restErrors.batchEmpty();
  if (body.length > MAX_BATCH) throw restErrors.batchTooLong(MAX_BATCH);
  return body as string[];
}

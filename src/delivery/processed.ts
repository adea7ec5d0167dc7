/**
 * Processed CDN delivery: plan (parsed with the URL) -> rendition key of uuid + canonical plan +
 * negotiated format -> memory/disk cache, or one bounded, single-flight render of the stored file.
 */
import os from 'node:os';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { configureSharp } from '../media/lazy-sharp.js';
import type { AppContext } from '../context.js';
import type { FileRecord } from '../core/file-record.js';
import { isAppError } from '../core/errors.js';
import type { Plan } from '../media/plan.js';
import { negotiateFormat, type RenderResult } from '../media/render.js';
import { sendCdnError } from '../http/cdn/errors.js';
import { type HeaderList, IMMUTABLE, SANDBOX_CSP, contentDisposition, lastModified, notModified, parseRange } from '../http/cdn/headers.js';
import { ResultCache, renditionKey, type CacheHit, type ResultMeta } from './result-cache.js';
import { SingleFlight, WorkQueue } from './work-queue.js';
import { assertRenderable, type StoredFileRenderer } from './render-file.js';
import { SharedResults } from './shared-results.js';
import { deploymentPrefix } from '../throttle/redis.js';
import { cdnErrors } from '../core/error-catalogue/media.js';

interface Produced { meta: ResultMeta; body: Buffer; remote?: boolean }

const EXPOSE = 'Content-Length, Etag, X-Image-Width, X-Image-Height, X-Image-Acceptable-Original, X-Image-Acceptable-Improved, X-Stowage-Cache';
const JSON_CACHE = 'public, max-age=86400';
const EXTENSIONS: Record<string, string> = { jpeg: 'jpg', png: 'png', webp: 'webp', avif: 'avif', svg: 'svg', mp4: 'mp4', webm: 'webm' };

export type ProcessedHandler = (req: IncomingMessage, res: ServerResponse, file: FileRecord, plan: Plan, filename: string | null) => Promise<void>;

export async function createProcessedHandler(ctx: AppContext, renderer: StoredFileRenderer): Promise<ProcessedHandler> {
  const cfg = ctx.config;
  const cpus = os.availableParallelism();
  // One libvips thread per pipeline (no pipeline pays for thread hand-offs; measured in bench/:
  // cheaper per image) and two pipelines per CPU, so a core never idles while the main thread
  // finishes one request and starts the next (measured: +12% req/s on 2 cores, same CPU/image).
  configureSharp((s) => s.concurrency(1));
  const cache = new ResultCache(`${cfg.dataDir}/cache`, cfg.cdnCacheMaxBytes, cfg.cdnMemoryCacheBytes, ctx.log);
  await cache.init();
  const queue = new WorkQueue(cfg.cdnProcessConcurrency || 2 * cpus, cfg.cdnProcessQueue);
  const flights = new SingleFlight<Produced>();
  // Results by where they came from (hit ratio = hit / all, in PromQL); children made once, not per request.
  const results = ctx.metrics.counter('stowage_cdn_renditions_total', 'Processed CDN responses by source: hit (this node\'s cache), miss (rendered here), shared (joined a render in flight), remote (another node\'s result)', ['result']);
  const byResult = { hit: results.labels('hit'), miss: results.labels('miss'), shared: results.labels('shared'), remote: results.labels('remote') };
  const overloaded = ctx.metrics.counter('stowage_cdn_overloaded_total', 'CDN renders refused with 503 because the render queue was full');
  const timedOut = ctx.metrics.counter('stowage_cdn_render_timeouts_total', 'CDN renders answered with an error at their deadline (STOWAGE_CDN_RENDER_TIMEOUT_MS)');
  ctx.metrics.gauge('stowage_cdn_render_queue_waiting', 'CDN renders waiting for a pipeline slot', () => queue.stats.waiting);
  ctx.metrics.gauge('stowage_cdn_render_running', 'CDN renders running', () => queue.stats.running);
  // Object storage: results shared by all nodes, one render per key across nodes (src/delivery/shared-results.ts).
  const shared = ctx.blobs.localPath ? null : new SharedResults<ResultMeta>(ctx.blobs, ctx.redis, deploymentPrefix(ctx), ctx.log);

  const produce = async (rendered: Promise<RenderResult>): Promise<Produced> => {
    const r = await rendered;
    return { meta: { contentType: r.contentType, width: r.width, height: r.height, format: r.format, varyAccept: r.varyAccept }, body: r.body };
  };

  return async function processed(req, res, file, plan, filename) {
    assertRenderable(file);
    const negotiated = plan.info ? 'json' : (negotiateFormat(plan, req.headers.accept) ?? '');
    const { key, etag } = renditionKey(file.uuid, plan, negotiated);
    const vary = negotiated !== '' && negotiated !== 'json';
    if (notModified(req, etag)) {
      res.writeHead(304, { etag, 'cache-control': plan.info ? JSON_CACHE : IMMUTABLE, 'access-control-allow-origin': '*', ...(vary && { vary: 'Accept' }) });
      res.end();
      return;
    }
    let state: 'hit' | 'miss' | 'shared' | 'remote' = 'hit';
    let hit: Readonly<CacheHit> | Produced | null = cache.inMemory(key) ?? (await cache.get(key));
    if (!hit) {
      // The slot is held until the render has ended, even when it answered at its deadline.
      const make = () =>
        produce(queue.run(() => renderer.start(file, plan, { accept: req.headers.accept }))).catch((err: unknown) => {
          if (isAppError(err) && err.status === 503) overloaded.inc();
          if (isAppError(err) && err.code === 'ProcessingTimeout') timedOut.inc();
          throw err;
        });
      const [p, leader] = flights.do(key, () => (shared ? shared.get(key, make) : make()).then(async (r) => {
        await cache.put(key, r.meta, r.body);
        return r;
      }));
      hit = await p;
      state = !leader ? 'shared' : 'remote' in hit && hit.remote ? 'remote' : 'miss';
    }
    byResult[state].inc();
    const rest = send(req, res, file, filename, plan, hit, { etag, state });
    if (rest && 'kind' in hit && hit.kind === 'file') {
      await pipeline(ResultCache.stream(hit, rest[0], rest[1]), res).catch(() => res.destroy());
    }
  };
}

/** Writes the headers, and the body when it is in memory; otherwise returns the byte range to stream. */
function send(req: IncomingMessage, res: ServerResponse, file: FileRecord, filename: string | null, plan: Plan, hit: Readonly<CacheHit> | Produced, o: { etag: string; state: string }): [number, number] | null {
  const { meta } = hit;
  const length = 'body' in hit ? hit.body.length : hit.length;
  const headers = answerHeaders(file, filename, plan, hit, o);
  const range = meta.format === 'json' ? ({ kind: 'full' } as const) : parseRange(req.headers.range, length);
  if (range.kind === 'unsatisfiable') {
    sendCdnError(res, cdnErrors.rangeNotSatisfiable(length));
    return null;
  }
  const status = range.kind === 'partial' ? 206 : 200;
  if (range.kind === 'partial') headers.push('content-range', `bytes ${range.start}-${range.end}/${length}`);
  headers.push('content-length', range.kind === 'partial' ? range.end - range.start + 1 : length);
  res.writeHead(status, headers);
  const [start, end] = range.kind === 'partial' ? [range.start, range.end] : [0, length - 1];
  if (req.method === 'HEAD' || length === 0) {
    res.end();
    return null;
  }
  if (!('body' in hit)) return [start, end];
  res.end(range.kind === 'partial' ? hit.body.subarray(start, end + 1) : hit.body);
  return null;
}

/** A memory hit's answer headers for one file row and URL: the last kept per entry. */
interface HitHeaders {
  file: FileRecord;
  plan: Plan;
  filename: string | null;
  list: readonly (string | number)[];
}

/**
 * Memory hits, file rows and parsed URLs are frozen and shared: a repeated cached URL copies its
 * headers instead of building them. A hit is one rendition key, so its ETag and meta are its own.
 */
const headersByHit = new WeakMap<object, HitHeaders>();

/** The answer's headers but its length and range: a fresh list the caller adds to. */
function answerHeaders(file: FileRecord, filename: string | null, plan: Plan, hit: Readonly<CacheHit> | Produced, o: { etag: string; state: string }): HeaderList {
  const kept = o.state === 'hit' && Object.isFrozen(hit) && Object.isFrozen(file);
  if (kept) {
    const known = headersByHit.get(hit);
    if (known !== undefined && known.file === file && known.plan === plan && known.filename === filename) return known.list.slice();
  }
  const list = buildHeaders(file, filename, plan, hit.meta, o);
  if (kept) headersByHit.set(hit, { file, plan, filename, list });
  return kept ? list.slice() : list;
}

function buildHeaders(file: FileRecord, filename: string | null, plan: Plan, meta: ResultMeta, o: { etag: string; state: string }): HeaderList {
  const headers: HeaderList = [
    'content-type', meta.contentType,
    'etag', o.etag,
    'cache-control', meta.format === 'json' ? JSON_CACHE : IMMUTABLE,
    'last-modified', lastModified(file.uploadedUs),
    'access-control-allow-origin', '*',
    'access-control-expose-headers', EXPOSE,
    'x-content-type-options', 'nosniff',
    'x-stowage-cache', o.state,
  ];
  if (meta.format !== 'json') {
    const name = filename ?? withExtension(file.originalFilename, EXTENSIONS[meta.format] ?? meta.format);
    headers.push('x-image-width', meta.width, 'x-image-height', meta.height, 'accept-ranges', 'bytes', 'content-disposition', contentDisposition(plan.inline === false ? 'attachment' : 'inline', name));
  }
  if (meta.varyAccept) headers.push('vary', 'Accept');
  if (meta.format === 'svg') headers.push('content-security-policy', SANDBOX_CSP);
  return headers;
}

function withExtension(name: string, ext: string): string {
  const dot = name.lastIndexOf('.');
  return `${dot > 0 ? name.slice(0, dot) : name}.${ext}`;
}

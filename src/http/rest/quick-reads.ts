/**
 * REST reads answered in front of Fastify (feature.ts `RestQuickRead`): a plain `GET` without a
 * query string or body, whose credentials check at once against cached keys, whose read has its
 * answer in memory and whose project's throttle decides in process, is answered here with the
 * route's exact bytes and headers. Everything else (and anything that throws) goes to Fastify
 * untouched, which answers every error: nothing here writes anything but a 200.
 *
 * Why: a cached file info costs a few µs to find and check, but routing it through Fastify (its
 * hooks, the reply, the route's input checks and promises) cost about as much again as a bare
 * Fastify route's whole request (docs/performance.md).
 *
 * Sits inside the metrics and health fronts (app.ts attaches those afterwards), so request ids,
 * durations, in-flight counts and draining apply as to any request; it names the request's route
 * for the metrics itself, and sets the CORS header the API's `onRequest` hook would.
 */
import type http from 'node:http';
import type { RestQuickRead } from '../../feature.js';
import type { RestVersion } from './version.js';
import { takeRequestListeners } from '../common/request-listeners.js';

export interface QuickReadChecks {
  reads: readonly RestQuickRead[];
  /** The API version of `Accept`; throws when none is served. */
  version(accept: string | undefined): RestVersion;
  /** The project the request's credentials name, checked without waiting; null when only the full path can tell. */
  project(req: http.IncomingMessage): number | null;
  /** Spends the project's throttle budget: true to answer now, false (or a throw) for the full path. */
  admit(projectId: number): boolean;
  /** Called as a read is answered here: names the request's route for its metrics (and counts it). */
  answering(res: http.ServerResponse, route: string): void;
  /** True once the server is closing: Fastify then answers 503 itself. */
  closing(): boolean;
}

/** Puts the quick reads in front of the server's request listeners (Fastify's). */
export function attachQuickReads(server: http.Server, checks: QuickReadChecks): void {
  if (checks.reads.length === 0) return;
  const routed = takeRequestListeners(server);
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const found = quickRead(req, checks);
    if (found === null) return routed(req, res);
    const { read, key, projectId, version } = found;
    let body: Buffer | null;
    try {
      body = read.answer(key, projectId, version);
    } catch {
      return routed(req, res);
    }
    if (body !== null) return answerOrRoute(body, found, req, res, checks, routed);
    if (read.load === undefined) return routed(req, res);
    // Not in memory (a cache miss, or PostgreSQL's store without a cache): read it here all the
    // same, which still spares the route's hooks, checks and reply; any throw goes to the route.
    read.load(key, projectId, version).then(
      (loaded) => (loaded === null ? routed(req, res) : answerOrRoute(loaded, found, req, res, checks, routed)),
      () => routed(req, res),
    );
  });
}

interface Found {
  read: RestQuickRead;
  key: string;
  projectId: number;
  version: RestVersion;
}

/** The read this request is for, its version and its project, checked in the full path's order; null for the route. */
function quickRead(req: http.IncomingMessage, checks: QuickReadChecks): Found | null {
  const { headers } = req;
  const url = req.url ?? '';
  // Only what the reads serve: a GET with credentials and no body (the signature covers its MD5).
  if (req.method !== 'GET' || headers.authorization === undefined || hasBody(headers) || url.includes('?') || checks.closing()) return null;
  for (const read of checks.reads) {
    const key = read.match(url);
    if (key === null) continue;
    try {
      const version = checks.version(headers.accept);
      const projectId = checks.project(req);
      return projectId === null ? null : { read, key, projectId, version };
    } catch {
      return null;
    }
  }
  return null;
}

/** Admitted last: only a request answered here spends the throttle budget (a refusal spends none). */
function answerOrRoute(body: Buffer, found: Found, req: http.IncomingMessage, res: http.ServerResponse, checks: QuickReadChecks, routed: http.RequestListener): void {
  if (!admits(found.projectId, checks)) return void routed(req, res);
  checks.answering(res, found.read.route);
  // The headers Fastify's reply sends for the route's answer (sendJsonBytes), in its order.
  res.writeHead(200, { 'access-control-allow-origin': '*', 'content-type': 'application/json', 'content-length': String(body.length) });
  res.end(body);
}

function admits(projectId: number, checks: QuickReadChecks): boolean {
  try {
    // Checked again after a load: the server may have started closing meanwhile (Fastify answers 503).
    return !checks.closing() && checks.admit(projectId);
  } catch {
    return false;
  }
}

function hasBody(headers: http.IncomingHttpHeaders): boolean {
  const length = headers['content-length'];
  return (length !== undefined && length !== '0') || headers['transfer-encoding'] !== undefined;
}

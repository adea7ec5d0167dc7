/**
 * REST reads answered in front of Fastify (feature.ts `RestQuickRead`): a plain `GET` without a
 * query string or body, which the REST gate (gate.ts) admits at once (cached keys, an in-process
 * throttle) and whose read has its answer, is answered here with the route's exact bytes and
 * headers. The gate is the one the API's hooks use: a request it admits here spends the project's
 * budget here, and should the read not answer after all, goes to Fastify carrying its admission
 * (the hooks do not check it again). Everything else (and anything that throws) goes to Fastify
 * untouched, which answers every error: nothing here writes anything but a 200.
 *
 * Why: a cached file info costs a few µs to find and check, but routing it through Fastify (its
 * routing, hooks, reply, the route's input checks and promises) cost about as much again
 * (docs/performance.md).
 *
 * Sits inside the metrics and health fronts (app.ts attaches those afterwards), so request ids,
 * durations, in-flight counts and draining apply as to any request; it names the request's route
 * for the metrics itself, and sets the CORS header the API's `onRequest` hook would.
 */
import type http from 'node:http';
import type { RestQuickRead } from '../../feature.js';
import type { Admitted, RestGate } from './gate.js';
import { takeRequestListeners } from '../common/request-listeners.js';

export interface QuickReadChecks {
  reads: readonly RestQuickRead[];
  /** The API's gate (gate.ts): Accept, authentication, throttling. */
  gate: RestGate;
  /** Called as a read is answered here: names the request's route for its metrics (and counts it). */
  answering(res: http.ServerResponse, route: string): void;
  /** True once the server is closing: Fastify then answers 503 itself. */
  closing(): boolean;
}

/** Puts the quick reads in front of the server's request listeners (Fastify's). */
export function attachQuickReads(server: http.Server, checks: QuickReadChecks): void {
  if (checks.reads.length === 0) return;
  const fastify = takeRequestListeners(server);
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const found = quickRead(req, checks);
    if (found === null) return fastify(req, res);
    // Admitted: from here on Fastify takes the request as the gate let it through.
    const routed = () => {
      checks.gate.carry(req, found.admitted);
      fastify(req, res);
    };
    const { read, key, admitted } = found;
    let body: Buffer | null;
    try {
      body = read.answer(key, admitted.projectId, admitted.version);
    } catch {
      return routed();
    }
    if (body !== null) return answer(body, found, res, checks);
    if (read.load === undefined) return routed();
    // Not in memory (a cache miss, or PostgreSQL's store without a cache): read it here all the
    // same, which still spares the route's hooks, checks and reply; any throw goes to the route.
    read.load(key, admitted.projectId, admitted.version).then(
      // Checked again after the load: the server may have started closing meanwhile (Fastify answers 503).
      (loaded) => (loaded === null || checks.closing() ? routed() : answer(loaded, found, res, checks)),
      routed,
    );
  });
}

interface Found {
  read: RestQuickRead;
  key: string;
  admitted: Admitted;
}

/** The read this request is for, admitted by the gate at once; null for Fastify (nothing spent). */
function quickRead(req: http.IncomingMessage, checks: QuickReadChecks): Found | null {
  const { headers } = req;
  const url = req.url ?? '';
  // Only what the reads serve: a GET with credentials and no body (the signature covers its MD5).
  if (req.method !== 'GET' || headers.authorization === undefined || hasBody(headers) || url.includes('?') || checks.closing()) return null;
  for (const read of checks.reads) {
    const key = read.match(url);
    if (key === null) continue;
    try {
      const passed = checks.gate.atOnce(req, NO_BODY);
      return passed.admitted ? { read, key, admitted: passed } : null;
    } catch {
      // A refusal: Fastify's hooks find and answer it again.
      return null;
    }
  }
  return null;
}

const NO_BODY = Buffer.alloc(0);

function answer(body: Buffer, found: Found, res: http.ServerResponse, checks: QuickReadChecks): void {
  checks.answering(res, found.read.route);
  // The headers Fastify's reply sends for the route's answer (sendJsonBytes), in its order.
  res.writeHead(200, { 'access-control-allow-origin': '*', 'content-type': 'application/json', 'content-length': String(body.length) });
  res.end(body);
}

function hasBody(headers: http.IncomingHttpHeaders): boolean {
  const length = headers['content-length'];
  return (length !== undefined && length !== '0') || headers['transfer-encoding'] !== undefined;
}

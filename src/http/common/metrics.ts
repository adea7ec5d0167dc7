/**
 * Prometheus metrics and request ids on every surface (prom-client, Apache-2.0).
 *
 *   GET /metrics   the process's metrics in the Prometheus text format, on one port only
 *                  (metrics-home.ts picks it; STOWAGE_METRICS=off hides it)
 *
 * Every response carries `X-Request-Id`: the client's own when it sent a sane one, else a new one
 * (a per-process prefix and a counter: no random bytes on the hot path). Per request the CDN pays a
 * timestamp, a label lookup and one histogram observe; the label is a coarse kind of URL (a file,
 * a file with operations, a group), never the URL itself, so the series stay few.
 */
import crypto from 'node:crypto';
import type http from 'node:http';
import { performance } from 'node:perf_hooks';
import client from 'prom-client';
import type { Logger } from 'pino';
import type { FeatureMetrics } from '../../context.js';
import { RequestDurations } from './request-durations.js';
import { requestIdOf, setRequestId } from './request-id.js';
import { takeRequestListeners } from './request-listeners.js';

export type Surface = 'rest' | 'upload' | 'cdn' | 's3';

/** Where a Fastify hook leaves the matched route pattern for the outer listener to read. */
const ROUTE = Symbol('stowage.route');
type Labeled = http.ServerResponse & { [ROUTE]?: string };

/** On a response: when its request arrived (performance.now()), its id and, on the Upload API, its socket. */
const STARTED = Symbol('stowage.started');
const SOCKET = Symbol('stowage.socket');

/** On a socket: how many of its received bytes were already counted (keep-alive connections carry many requests). */
const COUNTED = Symbol('stowage.counted');
type CountedSocket = http.IncomingMessage['socket'] & { [COUNTED]?: number };
type Timed = Labeled & { [STARTED]?: number; [SOCKET]?: CountedSocket | null };

const SANE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export interface AttachOptions {
  /**
   * The server writes `X-Request-Id` (`requestIdOf`) with each answer's own headers. A header set
   * ahead of `writeHead` makes Node take every header of the answer through `setHeader` one by one
   * (validated, lower-cased, an array each), where headers handed to `writeHead` alone are written
   * as they come.
   */
  idHeaderByServer?: boolean;
}


export class NodeMetrics implements FeatureMetrics {
  readonly registry = new client.Registry();
  private readonly duration: RequestDurations;
  private readonly uploadBytes: client.Counter;
  private readonly idPrefix = crypto.randomBytes(4).toString('hex');
  private seq = 0;

  constructor(private readonly log: Logger) {
    // Unprefixed: process_* and nodejs_* are the names dashboards and alerts for Node services expect.
    client.collectDefaultMetrics({ register: this.registry });
    this.duration = new RequestDurations({
      name: 'stowage_http_request_duration_seconds',
      help: 'HTTP requests by surface, route and status: count and latency until the response ended',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registry: this.registry,
    });
    this.uploadBytes = this.counter('stowage_upload_received_bytes_total', 'Bytes received on Upload API connections (request lines, headers and bodies)');
  }

  /** A counter of this node's registry (features count their own events: webhook failures, 503s). */
  counter<L extends string = never>(name: string, help: string, labelNames: readonly L[] = []): client.Counter<L> {
    return new client.Counter<L>({ name, help, labelNames, registers: [this.registry] });
  }

  /**
   * A counter whose running total another module keeps (`read` answers it since the process
   * started): read when Prometheus scrapes, so the counted path pays nothing.
   */
  counterOf(name: string, help: string, read: () => number): void {
    let seen = 0;
    new client.Counter({
      name,
      help,
      registers: [this.registry],
      collect() {
        const now = read();
        if (now > seen) this.inc(now - seen);
        seen = Math.max(seen, now);
      },
    });
  }

  /** A gauge read when Prometheus scrapes (queue depth, cache hit ratio): nothing per request. */
  gauge(name: string, help: string, read: () => number | Promise<number>): void {
    new client.Gauge({
      name,
      help,
      registers: [this.registry],
      async collect() {
        this.set(await read());
      },
    });
  }

  /** Fastify surfaces: name the matched route pattern (`/files/:uuid/`) for the request's labels. */
  routeLabel(res: http.ServerResponse, pattern: string | undefined): void {
    (res as Labeled)[ROUTE] = pattern ?? 'unmatched';
  }

  /**
   * Puts the request id and the timing in front of a server's request listeners, and /metrics when
   * this surface is where the process exposes them (only one port does: one scrape per process).
   */
  attach(server: http.Server, surface: Surface, serveMetrics: boolean, opts: AttachOptions = {}): void {
    const setIdHeader = opts.idHeaderByServer !== true;
    const inner = takeRequestListeners(server);
    // One 'close' listener per surface, shared by every response: the request's start and id ride
    // on the response (no closure, no label object per request).
    const closed = this.closedListener(surface);
    server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
      if (serveMetrics && isMetricsRequest(req)) {
        void this.serve(res);
        return;
      }
      const given = req.headers['x-request-id'];
      const id = typeof given === 'string' && SANE_ID.test(given) ? given : `${this.idPrefix}-${(++this.seq).toString(36)}`;
      if (setIdHeader) res.setHeader('x-request-id', id);
      const timed = res as Timed;
      timed[STARTED] = performance.now();
      setRequestId(res, id);
      // Taken now: by the response's 'close' the request may have let go of its socket (null).
      if (surface === 'upload') timed[SOCKET] = req.socket as CountedSocket | null;
      // `on`, not `once`: a response closes once, and `once` wraps (and later unhooks) a listener per request.
      res.on('close', closed);
      inner(req, res);
    });
  }

  /** The 'close' listener of `surface`'s responses (`this` is the response). */
  private closedListener(surface: Surface): (this: http.ServerResponse) => void {
    const ended = (res: Timed): void => {
      const req = res.req;
      const started = res[STARTED] ?? performance.now();
      const route = res[ROUTE] ?? (surface === 'cdn' ? cdnRoute(req.url ?? '') : 'unmatched');
      this.duration.record(surface, route, res.statusCode, (performance.now() - started) / 1000);
      const socket = res[SOCKET];
      if (surface === 'upload' && socket) this.countReceived(socket);
      if (this.log.isLevelEnabled('debug')) {
        this.log.debug({ reqId: requestIdOf(res), surface, method: req.method, url: req.url, status: res.statusCode, ms: Math.round(performance.now() - started) }, 'request');
      }
    };
    return function (this: http.ServerResponse) {
      ended(this);
    };
  }

  /**
   * Adds what the connection received since the last count. The socket reads ahead of the request
   * event (the first chunk of a body arrives with its headers), so counting from the request's start
   * would miss it; counting per socket at each request's end misses nothing.
   */
  private countReceived(socket: CountedSocket): void {
    const read = socket.bytesRead;
    this.uploadBytes.inc(Math.max(0, read - (socket[COUNTED] ?? 0)));
    socket[COUNTED] = read;
  }

  /** The listener of a port that serves only /metrics (STOWAGE_METRICS_PORT). */
  readonly onlyMetrics = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    if (isMetricsRequest(req)) void this.serve(res);
    else res.writeHead(404, { 'content-type': 'text/plain' }).end('only /metrics is served here\n');
  };

  private async serve(res: http.ServerResponse): Promise<void> {
    try {
      const body = await this.registry.metrics();
      res.writeHead(200, { 'content-type': this.registry.contentType, 'cache-control': 'no-store' }).end(body);
    } catch (err) {
      this.log.error({ err }, 'metrics collection failed');
      res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics collection failed\n');
    }
  }
}

function isMetricsRequest(req: http.IncomingMessage): boolean {
  return req.url === '/metrics' && (req.method === 'GET' || req.method === 'HEAD');
}

/** A CDN URL's kind, from its shape alone (no parsing): group, file with operations, file, other. */
export function cdnRoute(url: string): string {
  if (url.length < 37 || url.charCodeAt(0) !== 47 /* / */) return 'other';
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  if (path.charCodeAt(37) === 126 /* ~ */) return 'group';
  return path.includes('/-/') ? 'file_operations' : 'file';
}

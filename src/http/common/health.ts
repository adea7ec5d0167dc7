/**
 * Probes and drain for every surface, in front of the surface's own routing (so no auth, Accept
 * check, throttling or CDN URL parsing applies, and neither path can collide with a uuid):
 *   GET /healthz  liveness: the process serves HTTP (200 while draining too: do not restart it).
 *   GET /readyz   readiness: metadata store and blob store answer, the data dir has at least
 *                 minFreeBytes free, and the node is not draining (503 otherwise, so a load
 *                 balancer stops sending new requests).
 * The same front counts in-flight requests, so shutdown can wait for them with a bound.
 */
import type http from 'node:http';
import type { AppContext } from '../../context.js';
import { freeBytes } from './disk-space.js';
import { takeRequestListeners } from './request-listeners.js';

/** `/healthz` or `/readyz` (a query string allowed), else null: checked without splitting every request's URL. */
function probePath(url: string): '/healthz' | '/readyz' | null {
  for (const path of ['/healthz', '/readyz'] as const) {
    if (url.startsWith(path) && (url.length === path.length || url.charCodeAt(path.length) === 63 /* ? */)) return path;
  }
  return null;
}

const PROBE_TIMEOUT_MS = 3000;

export class NodeHealth {
  draining = false;
  private inFlight = 0;
  private idleWaiters: Array<() => void> = [];

  constructor(private readonly ctx: AppContext) {}

  /** Puts the probes and the in-flight counter in front of a server's request listeners. */
  attach(server: http.Server): void {
    const inner = takeRequestListeners(server);
    server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
      const path = probePath(req.url ?? '');
      if (path !== null && (req.method === 'GET' || req.method === 'HEAD')) {
        void this.probe(path, res);
        return;
      }
      this.inFlight++;
      // `on`, not `once`: a response closes once, and `once` wraps (and later unhooks) a listener per request.
      res.on('close', this.closed);
      // While draining, keep-alive connections close after their current response.
      if (this.draining) res.setHeader('connection', 'close');
      inner(req, res);
    });
  }

  /** One listener for every request (no closure per request). */
  private readonly closed = (): void => this.done();

  private done(): void {
    this.inFlight--;
    if (this.inFlight === 0) for (const w of this.idleWaiters.splice(0)) w();
  }

  /** Resolves once no request is in flight, or after `ms` (false then). */
  waitIdle(ms: number): Promise<boolean> {
    if (this.inFlight === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      this.idleWaiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  get activeRequests(): number {
    return this.inFlight;
  }

  private async probe(path: string, res: http.ServerResponse): Promise<void> {
    // While draining, probes close their connection too: a pooled keep-alive connection must not
    // keep reaching a node whose listeners are closed.
    const headers = { 'content-type': 'application/json', 'cache-control': 'no-store', ...(this.draining && { connection: 'close' }) };
    if (path === '/healthz') {
      res.writeHead(200, headers).end(JSON.stringify({ status: 'ok' }));
      return;
    }
    const checks = { db: 'ok', blobs: 'ok', disk: 'ok', freeBytes: null as number | null, draining: this.draining };
    await Promise.all([
      withTimeout(freeBytes(this.ctx.config.dataDir)).then(
        (free) => {
          checks.freeBytes = free;
          if (free < this.ctx.config.minFreeBytes) checks.disk = 'low';
        },
        (err: unknown) => {
          checks.disk = errorText(err);
        },
      ),
      withTimeout(this.ctx.db.ping()).catch((err: unknown) => {
        checks.db = errorText(err);
      }),
      withTimeout(this.ctx.blobs.check?.() ?? Promise.resolve()).catch((err: unknown) => {
        checks.blobs = errorText(err);
      }),
    ]);
    const ready = checks.db === 'ok' && checks.blobs === 'ok' && checks.disk === 'ok' && !this.draining;
    if (!ready) this.ctx.log.warn({ checks }, 'not ready');
    res.writeHead(ready ? 200 : 503, headers).end(JSON.stringify({ status: ready ? 'ready' : 'unavailable', ...checks, inFlight: this.inFlight }));
  }
}

function withTimeout<T>(p: Promise<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('timed out')), PROBE_TIMEOUT_MS);
    p.then(
      (v) => (clearTimeout(timer), resolve(v)),
      (e: unknown) => (clearTimeout(timer), reject(e)),
    );
  });
}

/** A short, secret-free reason (no connection strings, no stack). */
function errorText(err: unknown): string {
  const e = err as { name?: string; code?: string; message?: string };
  return (e.code ?? e.name ?? 'error').slice(0, 60);
}

/**
 * How long a client may take to send its request, so that slow or stalled senders cannot hold
 * connections (and what the server keeps for them) indefinitely:
 *   headers    the request line and headers arrive within `headersMs` (Node answers 408 and closes);
 *   request    the whole request, body included, arrives within `requestMs` (0 = no bound; 408);
 *   body idle  a body that stops arriving for `bodyIdleMs` loses its connection, so a long upload
 *              that keeps moving is fine while a stalled one is dropped long before `requestMs`.
 * None of them bounds the server's own work after the request has arrived (a long multipart
 * completion, a render), nor a slow download: only the client's sending.
 */
import type http from 'node:http';
import type { Config, Surface } from '../../config.js';
import { takeRequestListeners } from './request-listeners.js';

export interface RequestTimeouts {
  headersMs: number;
  requestMs: number;
  bodyIdleMs: number;
}

/** Node checks the header and request deadlines on an interval; a fraction of the shortest keeps them honest. */
function checkingIntervalMs(t: RequestTimeouts): number {
  const shortest = Math.min(...[t.headersMs, t.requestMs].filter((ms) => ms > 0));
  return Math.min(30_000, Math.max(100, Math.floor(shortest / 4)));
}

/** Call before `listen`: Node reads the checking interval when the server starts listening. */
export function applyRequestTimeouts(server: http.Server, t: RequestTimeouts): void {
  server.headersTimeout = t.requestMs > 0 ? Math.min(t.headersMs, t.requestMs) : t.headersMs;
  server.requestTimeout = t.requestMs;
  // A constructor option in Node's types, but read from the server when it starts listening.
  (server as http.Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = checkingIntervalMs(t);
  if (t.bodyIdleMs > 0) {
    // Wrapped, not a second listener (request-listeners.ts); watched after the others.
    const inner = takeRequestListeners(server);
    server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
      inner(req, res);
      watchBodyIdle(req, t.bodyIdleMs);
    });
  }
}

function expectsBody(req: http.IncomingMessage): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

/**
 * Watches the bytes read from the socket rather than the body stream itself: listening to the
 * stream would change how its consumer reads it.
 */
function watchBodyIdle(req: http.IncomingMessage, idleMs: number): void {
  if (!expectsBody(req)) return;
  const socket = req.socket;
  let seen = socket.bytesRead;
  let lastProgress = Date.now();
  const timer = setInterval(
    () => {
      if (req.complete || socket.destroyed) return clearInterval(timer);
      if (socket.bytesRead !== seen) {
        seen = socket.bytesRead;
        lastProgress = Date.now();
      } else if (Date.now() - lastProgress >= idleMs) {
        clearInterval(timer);
        socket.destroy();
      }
    },
    Math.min(5_000, Math.max(50, Math.floor(idleMs / 4))),
  );
  timer.unref();
  req.once('close', () => clearInterval(timer));
}

/** The configured bounds of one surface: uploads may take long but must keep moving; the CDN receives no bodies. */
export function requestTimeoutsFor(config: Config, surface: Surface): RequestTimeouts {
  const headersMs = config.headersTimeoutMs;
  // S3 takes object bodies as the Upload API takes files.
  if (surface === 'upload' || surface === 's3') return { headersMs, requestMs: config.uploadRequestTimeoutMs, bodyIdleMs: config.bodyIdleTimeoutMs };
  if (surface === 'rest') return { headersMs, requestMs: config.requestTimeoutMs, bodyIdleMs: config.bodyIdleTimeoutMs };
  return { headersMs, requestMs: config.requestTimeoutMs, bodyIdleMs: 0 };
}

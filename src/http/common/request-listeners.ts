/**
 * Fronts on a server's request path (metrics, health, quick reads, the body-idle watch) each take
 * the listeners already there and call them after their own work, so the server keeps exactly one
 * `request` listener: with two or more, every request's `emit` copies the listener list first.
 */
import type http from 'node:http';

export type RequestListener = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/** Takes the server's `request` listeners off it and returns them as one function. */
export function takeRequestListeners(server: http.Server): RequestListener {
  const inner = server.listeners('request') as RequestListener[];
  server.removeAllListeners('request');
  const only = inner.length === 1 ? inner[0] : undefined;
  if (only !== undefined) return (req, res) => only.call(server, req, res);
  return (req, res) => {
    for (const l of inner) l.call(server, req, res);
  };
}

/**
 * What a log line about one request names: its URL and the id the response carries in
 * `X-Request-Id` (set first thing by metrics.ts), so an operator can go from a client's report
 * (the header) to the server's log line.
 */
import type http from 'node:http';

export interface RequestRef {
  url?: string;
  reqId?: string;
}

export function requestRef(req: http.IncomingMessage, res: http.ServerResponse): RequestRef {
  const id = res.getHeader('x-request-id');
  return { url: req.url, ...(typeof id === 'string' && { reqId: id }) };
}

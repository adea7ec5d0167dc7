/**
 * What a log line about one request names: its URL and the id the response carries in
 * `X-Request-Id` (chosen first thing by metrics.ts), so an operator can go from a client's report
 * (the header) to the server's log line.
 */
import type http from 'node:http';
import { requestIdOf } from './request-id.js';

export interface RequestRef {
  url?: string;
  reqId?: string;
}

export function requestRef(req: http.IncomingMessage, res: http.ServerResponse): RequestRef {
  const id = requestIdOf(res);
  return { url: req.url, ...(id !== undefined && { reqId: id }) };
}

/**
 * The CDN surface's responses: every answer carries the request id (metrics.ts chose it) as
 * `X-Request-Id`, added to the headers handed to `writeHead` rather than set ahead of it (the
 * surface is attached with `idHeaderByServer`). A header set ahead of `writeHead` makes Node take
 * every header of the answer through `setHeader`; handed to `writeHead` alone they are written as
 * given. An implicit head (`end()` without `writeHead`) comes through here too.
 */
import http from 'node:http';
import { requestIdOf } from '../common/request-id.js';

type Headers = http.OutgoingHttpHeaders | http.OutgoingHttpHeader[];

export class CdnResponse extends http.ServerResponse {
  /**
   * `headers`: an array (`[name, value, …]`) is the caller's own, appended to; an object is
   * copied, so it may be shared or frozen.
   */
  override writeHead(statusCode: number, reasonOrHeaders?: string | Headers, headers?: Headers): this {
    const id = requestIdOf(this);
    if (typeof reasonOrHeaders === 'string') return super.writeHead(statusCode, reasonOrHeaders, id === undefined ? headers : withId(headers, id));
    return super.writeHead(statusCode, id === undefined ? reasonOrHeaders : withId(reasonOrHeaders, id));
  }
}

function withId(headers: Headers | undefined, id: string): Headers {
  if (Array.isArray(headers)) {
    headers.push('x-request-id', id);
    return headers;
  }
  return { ...headers, 'x-request-id': id };
}

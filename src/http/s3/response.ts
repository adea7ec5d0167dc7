/**
 * The S3 surface's responses: every answer carries the request id (metrics.ts chose it) as
 * `X-Request-Id`, as every surface's does, and as `x-amz-request-id`, where S3 clients read it.
 * Both are added to the headers handed to `writeHead` rather than set ahead of it (the surface is
 * attached with `idHeaderByServer`): Node then writes the answer's headers as given, without taking
 * each through `setHeader`. An implicit head (`end()` without `writeHead`) comes through here too.
 */
import http from 'node:http';
import { requestIdOf } from '../common/request-id.js';

type Headers = http.OutgoingHttpHeaders | http.OutgoingHttpHeader[];

export class S3Response extends http.ServerResponse {
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
    headers.push('x-request-id', id, 'x-amz-request-id', id);
    return headers;
  }
  return { ...headers, 'x-request-id': id, 'x-amz-request-id': id };
}

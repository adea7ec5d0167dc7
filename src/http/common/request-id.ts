/**
 * The request id a response answers as `X-Request-Id`: chosen by metrics.ts as the request comes in
 * and carried on the response, so whoever writes the answer's headers or a log line about it (a
 * feature's own surface, such as S3's `x-amz-request-id`) reads the same id.
 */
import http from 'node:http';

const REQ_ID = Symbol('stowage.reqId');

type Carrying = http.ServerResponse & { [REQ_ID]?: string };

export function setRequestId(res: http.ServerResponse, id: string): void {
  (res as Carrying)[REQ_ID] = id;
}

/** The request id of a response on a surface with metrics attached; undefined elsewhere. */
export function requestIdOf(res: http.ServerResponse): string | undefined {
  return (res as Carrying)[REQ_ID];
}

type Headers = http.OutgoingHttpHeaders | http.OutgoingHttpHeader[];

/**
 * A response class for a surface attached with `idHeaderByServer`: each answer carries the request
 * id under every one of `names`, added to the headers handed to `writeHead` rather than set ahead
 * of it. One header set ahead of `writeHead` makes Node take every header of the answer through
 * `setHeader`; handed to `writeHead` alone they are written as given. An implicit head (`end()`
 * without `writeHead`) comes through here too. `headers` given as an array (`[name, value, …]`)
 * is the caller's own and appended to; an object is copied, so it may be shared or frozen.
 */
export function responseAnsweringId(names: readonly string[]) {
  const withId = (headers: Headers | undefined, id: string): Headers => {
    if (Array.isArray(headers)) {
      for (const name of names) headers.push(name, id);
      return headers;
    }
    const copy: http.OutgoingHttpHeaders = { ...headers };
    for (const name of names) copy[name] = id;
    return copy;
  };
  return class extends http.ServerResponse {
    override writeHead(statusCode: number, reasonOrHeaders?: string | Headers, headers?: Headers): this {
      const id = requestIdOf(this);
      if (typeof reasonOrHeaders === 'string') return super.writeHead(statusCode, reasonOrHeaders, id === undefined ? headers : withId(headers, id));
      return super.writeHead(statusCode, id === undefined ? reasonOrHeaders : withId(reasonOrHeaders, id));
    }
  };
}

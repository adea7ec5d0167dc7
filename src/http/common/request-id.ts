/**
 * The request id a response answers as `X-Request-Id`: chosen by metrics.ts as the request comes in
 * and carried on the response, so whoever writes the answer's headers or a log line about it (a
 * feature's own surface, such as S3's `x-amz-request-id`) reads the same id.
 */
import type http from 'node:http';

const REQ_ID = Symbol('stowage.reqId');

type Carrying = http.ServerResponse & { [REQ_ID]?: string };

export function setRequestId(res: http.ServerResponse, id: string): void {
  (res as Carrying)[REQ_ID] = id;
}

/** The request id of a response on a surface with metrics attached; undefined elsewhere. */
export function requestIdOf(res: http.ServerResponse): string | undefined {
  return (res as Carrying)[REQ_ID];
}

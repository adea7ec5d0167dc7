/**
 * The one way tests read an HTTP response: status, headers, the raw bytes, the text and (when the
 * text parses) the JSON body. Every helper that fetches (REST client, uploads, CDN, groups) returns
 * this shape, so a suite never writes its own reader.
 */

export interface Res {
  status: number;
  headers: Headers;
  /** The body's bytes (images, archives: decode them with sharp and friends). */
  body: Buffer;
  /** The body as UTF-8 text (error messages, `expect(status, r.text)`). */
  text: string;
  /** The parsed body when it is JSON, otherwise undefined. Wire shapes are checked field by field. */
  // biome-ignore lint/suspicious/noExplicitAny: a test reads any field of any answer; the assertion is the check
  json: any;
}

/** Reads the whole body of `res` once. */
export async function readResponse(res: Response): Promise<Res> {
  const body = Buffer.from(await res.arrayBuffer());
  const text = body.toString('utf8');
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined; // not JSON: the caller reads text or body
  }
  return { status: res.status, headers: res.headers, body, text, json };
}

/** fetch() and read the response. */
export async function request(url: string, init: RequestInit = {}): Promise<Res> {
  return readResponse(await fetch(url, init));
}

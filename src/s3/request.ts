/**
 * One S3 request as the handlers read it: the bucket and key from the path (path-style
 * `/<bucket>/<key>`), the query, and the raw forms the signature check rebuilds.
 */
import type http from 'node:http';
import { s3Error } from '../http/s3/errors.js';
import { S3Query } from './query.js';

/** What a request's URL says, read once per URL (`parsedUrl`). */
export interface S3Url {
  /** The URL as received: the signature check's cache keys on it (verified.ts). */
  url: string;
  rawPath: string;
  decodedPath: string;
  rawQuery: string;
  query: S3Query;
  /** Empty for the service (`/`). */
  bucket: string;
  /** Null for a bucket request (`/<bucket>` or `/<bucket>/`). */
  key: string | null;
}

/**
 * One request: its URL's shared parse and the request itself. The URL's fields are read through
 * the parse rather than copied onto each request.
 */
export class S3Request implements S3Url {
  readonly method: string;

  constructor(
    /** The URL's parse, shared by the requests repeating the URL (its identity names the URL: verified.ts). */
    readonly parsed: S3Url,
    readonly req: http.IncomingMessage,
    readonly res: http.ServerResponse,
  ) {
    this.method = req.method ?? 'GET';
  }

  get url(): string {
    return this.parsed.url;
  }
  get rawPath(): string {
    return this.parsed.rawPath;
  }
  get decodedPath(): string {
    return this.parsed.decodedPath;
  }
  get rawQuery(): string {
    return this.parsed.rawQuery;
  }
  get query(): S3Query {
    return this.parsed.query;
  }
  get bucket(): string {
    return this.parsed.bucket;
  }
  get key(): string | null {
    return this.parsed.key;
  }
}

/** S3's limit on a key: 1024 bytes of UTF-8. */
const MAX_KEY_BYTES = 1024;

export function parseRequest(req: http.IncomingMessage, res: http.ServerResponse): S3Request {
  return new S3Request(parsedUrl(req.url ?? '/'), req, res);
}

/**
 * A URL's parse, shared by the requests that sent the same URL lately (a presigned URL fetched
 * again and again): it depends on the URL alone and is immutable, and one map lookup by the URL
 * costs less than the slicing, decoding and key checks (and the query's own lookups) it saves.
 * Bounded by clearing: a miss costs one parse, and a full map means many distinct URLs.
 */
const recent = new Map<string, S3Url>();
const MAX_SHARED = 1000;
const MAX_SHARED_LENGTH = 4096;

/**
 * The last URL's parse, compared before the map: a request's URL is a new string, and comparing
 * it with the last one costs less than hashing it for the map (a presigned URL is ~600 characters),
 * while a different URL is told apart by its length or its first differing character.
 */
let last: S3Url | undefined;

function parsedUrl(url: string): S3Url {
  if (last !== undefined && last.url === url) return last;
  let u = recent.get(url);
  if (u === undefined) {
    // Throws for a URL S3 refuses: those are not kept.
    u = parseUrl(url);
    if (url.length <= MAX_SHARED_LENGTH) {
      if (recent.size >= MAX_SHARED) recent.clear();
      recent.set(url, u);
    }
  }
  last = u;
  return u;
}

function parseUrl(url: string): S3Url {
  const q = url.indexOf('?');
  const rawPath = q === -1 ? url : url.slice(0, q);
  const rawQuery = q === -1 ? '' : url.slice(q + 1);
  if (!rawPath.startsWith('/')) throw s3Error(400, 'InvalidURI', 'Couldn\'t parse the specified URI.');
  let decodedPath = rawPath;
  try {
    if (rawPath.includes('%')) decodedPath = decodeURIComponent(rawPath);
  } catch {
    throw s3Error(400, 'InvalidURI', 'Couldn\'t parse the specified URI.');
  }
  const slash = decodedPath.indexOf('/', 1);
  const bucket = slash === -1 ? decodedPath.slice(1) : decodedPath.slice(1, slash);
  const key = slash === -1 || slash === decodedPath.length - 1 ? null : decodedPath.slice(slash + 1);
  if (key !== null) checkKey(key);
  return Object.freeze({ url, rawPath, decodedPath, rawQuery, query: new S3Query(rawQuery), bucket, key });
}

/** Any UTF-16 surrogate (the pairs are fine, a lone one is not UTF-8); most keys have none. */
const SURROGATE = /[\ud800-\udfff]/;

/** A key S3 would take: 1 to 1024 bytes of UTF-8, no NUL (the metadata store cannot hold it). */
export function checkKey(key: string): void {
  if (Buffer.byteLength(key, 'utf8') > MAX_KEY_BYTES) throw s3Error(400, 'KeyTooLongError', 'Your key is too long.');
  if (key.includes('\u0000') || (SURROGATE.test(key) && /[\ud800-\udfff]/u.test(key.replace(/[\ud800-\udbff][\udc00-\udfff]/g, '')))) throw s3Error(400, 'InvalidArgument', 'The key is not valid UTF-8.');
}

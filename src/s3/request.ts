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

export interface S3Request extends S3Url {
  /** The URL's parse, shared by the requests repeating the URL (its identity names the URL: verified.ts). */
  parsed: S3Url;
  req: http.IncomingMessage;
  res: http.ServerResponse;
  method: string;
}

/** S3's limit on a key: 1024 bytes of UTF-8. */
const MAX_KEY_BYTES = 1024;

export function parseRequest(req: http.IncomingMessage, res: http.ServerResponse): S3Request {
  const u = parsedUrl(req.url ?? '/');
  return { parsed: u, req, res, method: req.method ?? 'GET', url: u.url, rawPath: u.rawPath, decodedPath: u.decodedPath, rawQuery: u.rawQuery, query: u.query, bucket: u.bucket, key: u.key };
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

function parsedUrl(url: string): S3Url {
  let u = recent.get(url);
  if (u === undefined) {
    // Throws for a URL S3 refuses: those are not kept.
    u = parseUrl(url);
    if (url.length <= MAX_SHARED_LENGTH) {
      if (recent.size >= MAX_SHARED) recent.clear();
      recent.set(url, u);
    }
  }
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

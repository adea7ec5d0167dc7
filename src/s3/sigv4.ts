/**
 * AWS Signature Version 4 as S3 checks it: in the Authorization header or in a presigned URL's
 * query string. The access key id is a project's public key, the secret one of its secret keys;
 * any region name is accepted (it is part of the signed scope, so it is taken from the request).
 *
 * The expected signature is computed here with node:crypto rather than with a client-side signer
 * (@smithy/signature-v4): a signer builds the canonical request of a request it is about to send
 * (it normalizes the path, hoists and adds headers), while a server must rebuild the one the client
 * built from the request exactly as it arrived: the raw path, the client's own list of signed
 * headers, its payload hash. The tests sign with the SDK's signer and with real clients.
 */
import crypto from 'node:crypto';
import type http from 'node:http';
import { s3Error } from '../http/s3/errors.js';
import type { S3Query } from './query.js';
import type { S3Url } from './request.js';
import type { VerifiedRequests } from './verified.js';

export const UNSIGNED_PAYLOAD = 'UNSIGNED-PAYLOAD';
const ALGORITHM = 'AWS4-HMAC-SHA256';
/** S3 accepts requests signed up to 15 minutes before or after its clock. */
const MAX_SKEW_MS = 15 * 60_000;
const MAX_PRESIGNED_S = 7 * 24 * 3600;

export interface SignedRequest {
  accessKey: string;
  /** YYYYMMDD'T'HHMMSS'Z' */
  amzDate: string;
  /** `<date>/<region>/s3/aws4_request` */
  scope: string;
  region: string;
  signedHeaders: string[];
  signature: string;
  /** The x-amz-content-sha256 the client signed (presigned: UNSIGNED-PAYLOAD). */
  payloadHash: string;
  presigned: boolean;
}

/** What a body decoder needs to check the signatures of aws-chunked chunks. */
export interface SigningContext {
  key: Buffer;
  amzDate: string;
  scope: string;
  seedSignature: string;
}

export const accessDenied = (message = 'Access Denied') => s3Error(403, 'AccessDenied', message);
const malformed = (message: string) => s3Error(400, 'AuthorizationHeaderMalformed', message);

/** The request's signature fields, or null when it carries none (an anonymous request). */
export function readSignature(req: http.IncomingMessage, query: S3Query): SignedRequest | null {
  const auth = req.headers.authorization;
  if (auth !== undefined) return fromHeader(auth, req);
  if (query.has('X-Amz-Signature') || query.has('X-Amz-Credential')) return fromQuery(query);
  if (query.has('Signature') && query.has('AWSAccessKeyId')) throw s3Error(400, 'InvalidRequest', 'Signature Version 2 is not supported: sign requests with AWS Signature Version 4.');
  return null;
}

function fromHeader(auth: string, req: http.IncomingMessage): SignedRequest {
  if (auth.startsWith('AWS ')) throw s3Error(400, 'InvalidRequest', 'Signature Version 2 is not supported: sign requests with AWS Signature Version 4.');
  if (!auth.startsWith(`${ALGORITHM} `)) throw malformed('The authorization header is malformed: unsupported algorithm.');
  const fields = new Map<string, string>();
  for (const part of auth.slice(ALGORITHM.length + 1).split(',')) {
    const eq = part.indexOf('=');
    if (eq > 0) fields.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  const amzDate = headerValue(req, 'x-amz-date') ?? '';
  const payloadHash = headerValue(req, 'x-amz-content-sha256');
  if (payloadHash === undefined) throw s3Error(400, 'InvalidRequest', 'Missing required header for this request: x-amz-content-sha256');
  return parsed(fields.get('Credential'), fields.get('SignedHeaders'), fields.get('Signature'), amzDate, payloadHash, false);
}

interface Presigned {
  signed: SignedRequest;
  expiresAtMs: number;
}

/** Presigned queries read whole once: a query is immutable and shared by the requests repeating it (query.ts). */
const presignedOf = new WeakMap<S3Query, Presigned>();

/** A presigned URL's fields; its expiry is checked on every request. */
function fromQuery(q: S3Query): SignedRequest {
  const known = presignedOf.get(q);
  if (known !== undefined) {
    if (Date.now() > known.expiresAtMs) throw expired();
    return known.signed;
  }
  if (q.get('X-Amz-Algorithm') !== ALGORITHM) throw accessDenied('Only AWS4-HMAC-SHA256 presigned URLs are supported.');
  const amzDate = q.get('X-Amz-Date') ?? '';
  const expires = q.get('X-Amz-Expires') ?? '';
  if (!/^\d{1,7}$/.test(expires) || Number(expires) > MAX_PRESIGNED_S) throw accessDenied('X-Amz-Expires must be 1 to 604800 seconds.');
  const signedAt = parseAmzDate(amzDate);
  if (signedAt === null) throw accessDenied('X-Amz-Date is malformed.');
  const expiresAtMs = signedAt + Number(expires) * 1000;
  if (Date.now() > expiresAtMs) throw expired();
  const signed = parsed(q.get('X-Amz-Credential') ?? undefined, q.get('X-Amz-SignedHeaders') ?? undefined, q.get('X-Amz-Signature') ?? undefined, amzDate, UNSIGNED_PAYLOAD, true);
  // Frozen: every request repeating the query shares it.
  presignedOf.set(q, { signed: Object.freeze(signed), expiresAtMs });
  return signed;
}

const expired = () => accessDenied('Request has expired');

function parsed(credential: string | undefined, signedHeaders: string | undefined, signature: string | undefined, amzDate: string, payloadHash: string, presigned: boolean): SignedRequest {
  if (!credential || !signedHeaders || !signature) throw malformed('The authorization header is malformed: Credential, SignedHeaders and Signature are required.');
  const parts = credential.split('/');
  if (parts.length !== 5 || parts[3] !== 's3' || parts[4] !== 'aws4_request' || !/^\d{8}$/.test(parts[1] ?? '')) {
    throw malformed('The authorization header is malformed: the Credential must be <key>/<date>/<region>/s3/aws4_request.');
  }
  const [accessKey, date, region] = parts as [string, string, string];
  if (!amzDate.startsWith(date)) throw s3Error(403, 'SignatureDoesNotMatch', 'The credential date does not match X-Amz-Date.');
  return { accessKey, amzDate, scope: `${date}/${region}/s3/aws4_request`, region, signedHeaders: signedHeaders.split(';'), signature, payloadHash, presigned };
}

function parseAmzDate(text: string): number | null {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(text);
  return m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6])) : null;
}

/**
 * A header's value as the canonical request holds it: repeated values joined, spaces folded.
 * Read from the raw header lines (`name` in lower case): `headersDistinct` would build a map of
 * every header of the request for the one or two asked.
 */
function headerValue(req: http.IncomingMessage, name: string): string | undefined {
  const raw = req.rawHeaders;
  let value: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const n = raw[i] as string;
    if (n.length !== name.length || n.toLowerCase() !== name) continue;
    const folded = foldSpaces(raw[i + 1] as string);
    value = value === undefined ? folded : `${value},${folded}`;
  }
  return value;
}

const foldSpaces = (text: string): string => (/^\S+(?: \S+)*$/.test(text) ? text : text.trim().replace(/\s+/g, ' '));

/** S3's URI encoding: every byte but A-Z a-z 0-9 - _ . ~ percent-encoded (and `/` too unless a path). */
export function uriEncode(text: string, keepSlash: boolean): string {
  const encoded = encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return keepSlash ? encoded.replace(/%2F/g, '/') : encoded;
}

/** The decoded query pairs in the sorted, strictly encoded form of a canonical request. */
function canonicalQuery(rawQuery: string, presigned: boolean): string {
  const pairs: Array<[string, string]> = [];
  for (const item of rawQuery.split('&')) {
    if (item === '') continue;
    const eq = item.indexOf('=');
    const key = decodeQueryPart(eq === -1 ? item : item.slice(0, eq));
    if (presigned && key === 'X-Amz-Signature') continue;
    pairs.push([canonicalPart(key), eq === -1 ? '' : canonicalPart(decodeQueryPart(item.slice(eq + 1)))]);
  }
  pairs.sort(([ak, av], [bk, bv]) => (ak < bk ? -1 : ak > bk ? 1 : av < bv ? -1 : av > bv ? 1 : 0));
  return pairs.map(([k, v]) => `${k}=${v}`).join('&');
}

/** Text of unreserved characters only is its own encoding (most of a presigned URL's query). */
const UNRESERVED = /^[A-Za-z0-9\-_.~]*$/;

const canonicalPart = (decoded: string): string => (UNRESERVED.test(decoded) ? decoded : uriEncode(decoded, false));

function decodeQueryPart(text: string): string {
  if (UNRESERVED.test(text)) return text;
  try {
    return decodeURIComponent(text.replace(/\+/g, '%20'));
  } catch {
    throw s3Error(400, 'InvalidArgument', 'The query string is not valid percent-encoded UTF-8.');
  }
}

const keyCache = new Map<string, Buffer>();

/** The day's signing key of a secret for a region (cached: four HMACs a request otherwise). */
function signingKey(secret: string, scope: string): Buffer {
  const id = `${secret}\n${scope}`;
  let key = keyCache.get(id);
  if (!key) {
    const [date, region] = scope.split('/') as [string, string];
    const kDate = hmac(`AWS4${secret}`, date);
    key = hmac(hmac(hmac(kDate, region), 's3'), 'aws4_request');
    if (keyCache.size > 1000) keyCache.clear();
    keyCache.set(id, key);
  }
  return key;
}

export const hmac = (key: string | Buffer, text: string): Buffer => crypto.createHmac('sha256', key).update(text, 'utf8').digest();
export const sha256Hex = (data: string | Buffer): string => crypto.createHash('sha256').update(data).digest('hex');

/** A path of unreserved characters and slashes only: its strict S3 encoding is itself. */
const PLAIN_PATH = /^[A-Za-z0-9\-_.~/]*$/;
const SIGNATURE_SYNTAX = /^[0-9a-f]{64}$/;

const signatureDoesNotMatch = () =>
  s3Error(403, 'SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided. Check your key and signing method.');

/**
 * Checks the signature against each of the project's secrets. `u` is the request's URL as
 * received and parsed (request.ts): the raw path (percent-encoded), the decoded one, the raw
 * query. Throws SignatureDoesNotMatch or RequestTimeTooSkewed; answers what an aws-chunked body's
 * chunk signatures are checked with. `verified`: requests already checked (verified.ts),
 * consulted after the time checks.
 */
export function verifySignature(req: http.IncomingMessage, sig: SignedRequest, secrets: readonly string[], u: S3Url, verified?: VerifiedRequests<SigningContext>): SigningContext {
  if (!sig.presigned) {
    const at = parseAmzDate(sig.amzDate);
    if (at === null) throw accessDenied('X-Amz-Date is missing or malformed.');
    if (Math.abs(Date.now() - at) > MAX_SKEW_MS) throw s3Error(403, 'RequestTimeTooSkewed', 'The difference between the request time and the current time is too large.');
  }
  if (!sig.signedHeaders.includes('host')) throw accessDenied('The host header must be signed.');
  const values = sig.signedHeaders.map((name) => headerValue(req, name) ?? '');
  // Everything the signature covers beyond the URL (which holds the path and query, and a
  // presigned URL the signature's fields too): the method, the signed headers' values and, for a
  // header signature, the Authorization header's fields.
  const method = req.method ?? '';
  const rest = { method, values, auth: sig.presigned ? '' : `${sig.signedHeaders.join(';')}\n${sig.payloadHash}\n${sig.amzDate}\n${sig.scope}\n${sig.signature}` };
  const known = verified?.get(u, rest, secrets);
  if (known !== undefined) return known;
  let headers = '';
  for (let i = 0; i < values.length; i++) headers += `${sig.signedHeaders[i]}:${values[i]}\n`;
  const { rawPath, decodedPath, rawQuery } = u;
  const signedHeaders = sig.signedHeaders.join(';');
  const query = canonicalQuery(rawQuery, sig.presigned);
  if (!SIGNATURE_SYNTAX.test(sig.signature)) throw signatureDoesNotMatch();
  const given = Buffer.from(sig.signature, 'hex');
  // The path as S3 canonicalizes it (each byte strictly encoded); a client that signed the path as
  // it sent it (fewer characters encoded) is accepted too.
  const strict = PLAIN_PATH.test(rawPath) ? rawPath : uriEncode(decodedPath, true);
  const paths = strict === rawPath ? [rawPath] : [strict, rawPath];
  for (const secret of secrets) {
    const key = signingKey(secret, sig.scope);
    for (const path of paths) {
      const canonical = `${method}\n${path}\n${query}\n${headers}\n${signedHeaders}\n${sig.payloadHash}`;
      const toSign = `${ALGORITHM}\n${sig.amzDate}\n${sig.scope}\n${sha256Hex(canonical)}`;
      if (crypto.timingSafeEqual(hmac(key, toSign), given)) {
        const signing = { key, amzDate: sig.amzDate, scope: sig.scope, seedSignature: sig.signature };
        verified?.add(u, rest, secrets, signing);
        return signing;
      }
    }
  }
  throw signatureDoesNotMatch();
}

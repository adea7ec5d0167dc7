/**
 * REST API authentication (spec "Authentication / REST API" and wire-reference §2.1, §5):
 * `Svc <pub>:<hmac-sha1>` over method, body MD5, Content-Type, date and URI, and
 * `Svc.Simple <pub>:<secret>` over HTTPS only (or loopback, which the server decides in `secure`). The official SDKs' words are accepted as aliases.
 */
import crypto from 'node:crypto';
import { safeEqual } from '../core/ids.js';
import type { VerifiedSignatures } from './verified-signatures.js';
import { restErrors } from '../core/error-catalogue/rest.js';

export const DATE_WINDOW_MS = 15 * 60 * 1000;

export interface RestAuthRequest {
  method: string;
  /** Path plus `?` and the raw query, exactly as on the wire. */
  uri: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  /** True over TLS, behind a trusted proxy that said X-Forwarded-Proto: https, or from loopback when allowed. */
  secure: boolean;
}

export interface KeyLookup {
  (pubKey: string): Promise<{ projectId: number; secrets: string[] } | null>;
}


type SignedParts = { method: string; body: Buffer | string; contentType: string; date: string; uri: string };

/** Most signed requests are GETs without a body: their MD5 is this constant. */
const EMPTY_MD5 = crypto.createHash('md5').update('').digest('hex');

/** The text the HMAC covers: method, body MD5, Content-Type, date and URI, a line each. */
function signedMessage(parts: SignedParts): string {
  const md5 = parts.body.length === 0 ? EMPTY_MD5 : crypto.createHash('md5').update(parts.body).digest('hex');
  // A template, not an array join: no array per request (the same text).
  return `${parts.method.toUpperCase()}\n${md5}\n${parts.contentType}\n${parts.date}\n${parts.uri}`;
}

export function signRestRequest(secret: string, parts: SignedParts): string {
  return hmacOf(secret, signedMessage(parts));
}

const hmacOf = (secret: string, message: string): string => crypto.createHmac('sha1', secret).update(message).digest('hex');

const AUTHORIZATION = /^(\S+)\s+([^:\s]+):(\S+)$/;

/** The public key an Authorization header names, if it has the `<scheme> <pub>:<credential>` form. */
export function restAuthPubKey(headers: RestAuthRequest['headers']): string | null {
  const m = AUTHORIZATION.exec(single(headers['authorization'])?.trim() ?? '');
  return m?.[2] ?? null;
}

/** What an Authorization header says: its kind of credential, the public key and the credential. */
export interface RestAuthHeader {
  kind: 'signed' | 'simple';
  pubKey: string;
  credential: string;
}

/** Resolves to the project id, or throws the spec's 400/401 with its exact detail text. */
export async function verifyRestAuth(req: RestAuthRequest, lookup: KeyLookup, opts: RestAuthOptions): Promise<number> {
  const auth = parseRestAuth(req, opts.aliases);
  return checkRestAuth(req, auth, await lookup(auth.pubKey), opts);
}

export interface RestAuthOptions {
  aliases: boolean;
  nowMs?: number;
  verified?: VerifiedSignatures;
}

/** The header's parts, or the spec's 400/401 for a header that names no credential to check. */
export function parseRestAuth(req: RestAuthRequest, aliases: boolean): RestAuthHeader {
  const header = single(req.headers['authorization']);
  if (!header) throw restErrors.credentialsMissing();
  const m = AUTHORIZATION.exec(header.trim());
  if (!m) throw restErrors.credentialsIncorrect();
  const [, scheme = '', pubKey = '', credential = ''] = m;
  const kind = schemeKind(scheme, aliases);
  if (!kind) throw restErrors.credentialsIncorrect();
  if (kind === 'simple' && !req.secure) {
    throw restErrors.simpleAuthOverHttp();
  }
  return { kind, pubKey, credential };
}

/**
 * Checks a parsed header against the keys of the project it names (null: no such key), without
 * waiting for anything: the REST server calls it directly when the keys are cached (server.ts).
 */
export function checkRestAuth(req: RestAuthRequest, auth: RestAuthHeader, project: { projectId: number; secrets: string[] } | null, opts: RestAuthOptions): number {
  if (!project) throw restErrors.publicKeyNotFound(auth.pubKey);
  const { credential } = auth;
  if (auth.kind === 'simple') {
    // Compare against every key so timing does not reveal which (or whether one) matched.
    const ok = project.secrets.map((s) => safeEqual(s, credential)).some(Boolean);
    if (!ok) throw restErrors.secretKeyNotFound();
    return project.projectId;
  }
  const date = dateHeader(req.headers, opts.aliases);
  if (!date) throw restErrors.credentialsIncorrect();
  const at = lastDate.parse(date);
  const now = opts.nowMs ?? Date.now();
  if (at === null || Math.abs(now - at) > DATE_WINDOW_MS) throw restErrors.credentialsIncorrect();
  const contentType = single(req.headers['content-type']) ?? '';
  const message = signedMessage({ method: req.method, body: req.body, contentType, date, uri: req.uri });
  const signature = credential.toLowerCase();
  const key = `${project.projectId}\n${signature}\n${message}`;
  if (opts.verified?.has(key, project.secrets)) return project.projectId;
  const ok = project.secrets.map((s) => safeEqual(hmacOf(s, message), signature)).some(Boolean);
  if (!ok) throw restErrors.signatureInvalid();
  opts.verified?.add(key, project.secrets);
  return project.projectId;
}

function schemeKind(scheme: string, aliases: boolean): 'signed' | 'simple' | null {
  if (scheme === 'Svc' || (aliases && scheme === 'Uploadcare')) return 'signed';
  if (scheme === 'Svc.Simple' || (aliases && scheme === 'Uploadcare.Simple')) return 'simple';
  return null;
}

/** Browsers cannot set Date, so SDKs send X-<Brand>-Date; it takes precedence when present. */
function dateHeader(headers: RestAuthRequest['headers'], aliases: boolean): string | undefined {
  return (aliases ? single(headers['x-uploadcare-date']) : undefined) ?? single(headers['x-svc-date']) ?? single(headers['date']);
}

/**
 * The last Date header parsed: an SDK signs every request of the same second with the same Date,
 * so consecutive requests mostly repeat it (the regex and Date.UTC cost more than the compare).
 */
const lastDate = {
  text: '',
  at: null as number | null,
  parse(text: string): number | null {
    if (text !== this.text) {
      this.at = parseHttpDate(text);
      this.text = text;
    }
    return this.at;
  },
};

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/**
 * RFC 2822 / RFC 1123 dates in GMT, also pyuploadcare's form with a comma after the year
 * (`Tue, 14 Jul 2026, 10:00:00 GMT`). Returns epoch ms or null.
 */
export function parseHttpDate(text: string): number | null {
  const m = /^(?:[A-Za-z]{3},\s*)?(\d{1,2})\s+([A-Za-z]{3})\s+(\d{4}),?\s+(\d{2}):(\d{2}):(\d{2})\s+(GMT|UTC|\+0000)$/.exec(text.trim());
  if (!m) return null;
  const month = MONTHS.indexOf((m[2] ?? '').toLowerCase());
  if (month < 0) return null;
  const [d, y, h, mi, s] = [m[1], m[3], m[4], m[5], m[6]].map(Number) as [number, number, number, number, number];
  if (h > 23 || mi > 59 || s > 60 || d < 1 || d > 31) return null;
  return Date.UTC(y, month, d, h, mi, s);
}

function single(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

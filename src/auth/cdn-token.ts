/**
 * Signed CDN URL tokens, Akamai style (wire-reference §3.5), as the hosted service's token
 * builders mint them (pyuploadcare `AkamaiSecureUrlBuilderWithAclToken` / `…WithUrlToken`):
 *
 *   ?token=exp=<unix>~acl=<path>~hmac=<hex>    the path, or every path under it when it ends in `*`
 *   ?token=exp=<unix>~hmac=<hex>               exactly one URL (the message then carries `url=<url>`)
 *
 * The HMAC (SHA-256; 40 hex digits = the builders' older SHA-1) is keyed with the project's CDN key
 * decoded from hex, over every field but `hmac` joined with `~` in the order written (`st=` is
 * honoured as a start time). `~` inside a path is written `%7e`. Pure: no I/O, no clock of its own.
 */
import crypto from 'node:crypto';

export interface CdnGrant {
  /** The path granted (`/uuid/…/`), `*` at the end for a prefix; null for an exact-URL token. */
  acl: string | null;
  /** Unix seconds. */
  exp: number;
}

export type TokenCheck = { ok: true } | { ok: false; reason: string };

const HEX = /^[0-9a-fA-F]+$/;
const MAX_TOKEN = 2048;

/** Writes `~` as `%7e` (it separates the token's fields) and every `%7E` in lower case. */
export function tokenPath(path: string): string {
  return path.replace(/~|%7E/g, '%7e');
}

/**
 * The acl that grants a path, as the builders write it: `/<path>/`, or `/<path>/*` for everything
 * under it (a path given with a filename is granted with and without the trailing `/`).
 */
export function aclFor(path: string, wildcard: boolean): string {
  const p = tokenPath(path).replace(/\*$/, '').replace(/^\/+|\/+$/g, '');
  return wildcard ? `/${p}/*` : `/${p}/`;
}

export function mintCdnToken(keyHex: string, grant: { acl: string } | { url: string }, exp: number): string {
  const signed = 'acl' in grant ? `exp=${exp}~acl=${grant.acl}` : `exp=${exp}~url=${grant.url}`;
  const hmac = crypto.createHmac('sha256', Buffer.from(keyHex, 'hex')).update(signed).digest('hex');
  return 'acl' in grant ? `${signed}~hmac=${hmac}` : `exp=${exp}~hmac=${hmac}`;
}

/**
 * Checks a token against the request: `path` as on the wire (no query), `url` the public URL of
 * that path (for exact-URL tokens), `now` in unix seconds. The signature is compared in constant time.
 */
export function checkCdnToken(key: Buffer, token: string | null, req: { path: string; url: string }, now: number): TokenCheck {
  if (token === null || token === '') return { ok: false, reason: 'This file needs a signed URL: add ?token=exp=…~acl=…~hmac=….' };
  if (token.length > MAX_TOKEN) return { ok: false, reason: 'The token is too long.' };
  const fields = token.split('~');
  const hmacField = fields.pop() ?? '';
  if (!hmacField.startsWith('hmac=')) return { ok: false, reason: 'The token must end with hmac=<hex>.' };
  const values = new Map<string, string>();
  for (const f of fields) {
    const eq = f.indexOf('=');
    if (eq <= 0 || values.has(f.slice(0, eq))) return { ok: false, reason: 'The token is malformed.' };
    values.set(f.slice(0, eq), f.slice(eq + 1));
  }
  const exp = values.get('exp');
  if (exp === undefined || !/^\d{1,12}$/.test(exp)) return { ok: false, reason: 'The token needs exp=<unix seconds>.' };
  const acl = values.get('acl') ?? null;
  const message = acl === null ? [...fields, `url=${req.url}`].join('~') : fields.join('~');
  const given = hmacField.slice(5);
  const algo = given.length === 64 ? 'sha256' : given.length === 40 ? 'sha1' : null;
  if (algo === null || !HEX.test(given)) return { ok: false, reason: 'The token signature is invalid.' };
  const expected = crypto.createHmac(algo, key).update(message).digest();
  if (!crypto.timingSafeEqual(expected, Buffer.from(given, 'hex'))) return { ok: false, reason: 'The token signature is invalid.' };
  if (Number(exp) < now) return { ok: false, reason: 'The token has expired.' };
  const st = values.get('st');
  if (st !== undefined && !(/^\d{1,12}$/.test(st) && Number(st) <= now)) return { ok: false, reason: 'The token is not valid yet.' };
  if (acl !== null && !aclGrants(acl, req.path)) return { ok: false, reason: 'The token does not grant this path.' };
  return { ok: true };
}

/**
 * Whether an acl grants a request path: equal (a trailing filename is only the download name, so
 * `/uuid/` also grants `/uuid/photo.jpg`), or a prefix when the acl ends in `*`.
 */
export function aclGrants(acl: string, path: string): boolean {
  const want = tokenPath(acl);
  const have = tokenPath(path);
  if (want.endsWith('*')) return have.startsWith(want.slice(0, -1));
  if (have === want || `${have}/` === want) return true;
  const slash = have.lastIndexOf('/');
  return !have.endsWith('/') && have.slice(0, slash + 1) === want;
}

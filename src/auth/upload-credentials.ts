/**
 * Upload API credentials (spec "Upload API credentials"): JWT Bearer tokens and the legacy
 * `signature` + `expire` pair. Pure verification: the caller decides whether signed uploads are on,
 * and spends operations atomically in the DB using the returned grant.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { invalidToken, verifyHs256 } from './jwt.js';
import { uploadErrors } from '../core/error-catalogue/upload.js';

export interface UploadGrant {
  kind: 'token' | 'signature';
  /** Stable id for operation accounting: sha256 hex of the raw token (or of the signature). */
  tokenId: string;
  /** Operations the token may spend over its lifetime; null = unlimited. */
  operationsLimit: number | null;
  /** Allowed endpoint paths (`/x/` exact, `/x/*` prefix); null = every signed endpoint. */
  scope: string[] | null;
  /** Verified JWT claims (tokens only). */
  claims?: Record<string, unknown>;
}

export interface CredentialsInput {
  /** Raw Authorization header. */
  authorization?: string;
  signature?: string;
  expire?: string;
  /** All secret keys of the project; any of them may have signed. */
  secrets: readonly string[];
  /** Scope path of the endpoint: '/base/', '/multipart/start/', '/from_url/', '/group/'. */
  endpointPath: string;
  nowMs?: number;
}

const SKEW_S = 30;
const MAX_LIFETIME_S = 24 * 3600;
const MAX_SCOPE_ITEMS = 16;
const MAX_SCOPE_CHARS = 64;
const MAX_OPERATIONS = 100_000;

/** Keys allowed at each level of `uc`; anything else rejects the token (spec: "any other key under uc"). */
const UC_KEYS = ['restrictions'];
const RESTRICTION_KEYS = ['scope', 'limits'];
const LIMIT_KEYS = ['operations'];

/** Operations spent per request (spec endpoint table); endpoints not in the table spend none. */
export function operationsCost(endpointPath: string, fileCount: number): number {
  switch (endpointPath) {
    case '/base/':
      return fileCount;
    case '/multipart/start/':
    case '/from_url/':
    case '/tus/':
      return 1;
    default:
      return 0; // '/group/' and unlisted endpoints
  }
}

/** An item matches exactly, or as a prefix when it ends in `/*` (so `/*` matches everything). */
export function scopeAllows(scope: readonly string[] | null, endpointPath: string): boolean {
  if (scope === null) return true;
  return scope.some((item) => (item.endsWith('/*') ? endpointPath.startsWith(item.slice(0, -1)) : item === endpointPath));
}

/**
 * Verifies the request's credentials and returns what they grant. A `signature` wins over an
 * Authorization header; with neither, the legacy error `signature` is required applies.
 * Throws AppError with the spec's codes (AccessToken*, ScopeForbiddenError, Signature*).
 */
export async function verifyUploadCredentials(input: CredentialsInput): Promise<UploadGrant> {
  const nowMs = input.nowMs ?? Date.now();
  if (input.signature === undefined && input.authorization !== undefined) {
    const grant = await verifyToken(input.authorization, input.secrets, nowMs);
    if (!scopeAllows(grant.scope, input.endpointPath)) {
      throw uploadErrors.scopeForbidden(input.endpointPath);
    }
    return grant;
  }
  return verifySignature(input.signature, input.expire, input.secrets, nowMs);
}

async function verifyToken(authorization: string, secrets: readonly string[], nowMs: number): Promise<UploadGrant> {
  const m = /^Bearer +(\S+) *$/i.exec(authorization);
  if (!m) throw invalidToken('the Authorization header must be "Bearer <token>"');
  const token = m[1]!;
  const claims = await verifyHs256(token, secrets);
  const { scope, operations } = checkClaims(claims, nowMs / 1000);
  return { kind: 'token', tokenId: sha256Hex(token), operationsLimit: operations, scope, claims };
}

/** Claim rules of the spec's table; the first broken rule is named in the error. */
function checkClaims(c: Record<string, unknown>, now: number): { scope: string[] | null; operations: number | null } {
  const { iat, exp } = c;
  if (typeof iat !== 'number' || !Number.isFinite(iat)) throw invalidToken('"iat" is required and must be Unix seconds');
  if (iat > now + SKEW_S) throw invalidToken('"iat" is in the future');
  if (typeof exp !== 'number' || !Number.isFinite(exp)) throw invalidToken('"exp" is required and must be Unix seconds');
  if (exp - iat > MAX_LIFETIME_S) throw invalidToken('lifetime ("exp" - "iat") exceeds 24 hours');
  for (const name of ['iss', 'sub', 'jti']) {
    if (c[name] !== undefined && typeof c[name] !== 'string') throw invalidToken(`"${name}" must be a string`);
  }
  const { scope, operations } = checkUc(c.uc);
  // Expiry last: a malformed token is invalid even when it is also expired.
  if (exp < now - SKEW_S) throw uploadErrors.tokenExpired();
  return { scope, operations };
}

function checkUc(uc: unknown): { scope: string[] | null; operations: number | null } {
  if (uc === undefined) return { scope: null, operations: null };
  const restrictions = objectWithKeys(uc, 'uc', UC_KEYS).restrictions;
  if (restrictions === undefined) return { scope: null, operations: null };
  const r = objectWithKeys(restrictions, 'uc.restrictions', RESTRICTION_KEYS);

  let scope: string[] | null = null;
  if (r.scope !== undefined) {
    const s = r.scope;
    if (!Array.isArray(s) || s.length < 1 || s.length > MAX_SCOPE_ITEMS) {
      throw invalidToken(`"uc.restrictions.scope" must be a list of 1 to ${MAX_SCOPE_ITEMS} paths`);
    }
    for (const item of s) {
      if (typeof item !== 'string' || !item.startsWith('/') || item.length > MAX_SCOPE_CHARS) {
        throw invalidToken(`each "uc.restrictions.scope" item must be a path starting with "/" of at most ${MAX_SCOPE_CHARS} characters`);
      }
    }
    scope = s as string[];
  }

  let operations: number | null = null;
  if (r.limits !== undefined) {
    const ops = objectWithKeys(r.limits, 'uc.restrictions.limits', LIMIT_KEYS).operations;
    if (ops !== undefined) {
      if (typeof ops !== 'number' || !Number.isInteger(ops) || ops < 1 || ops > MAX_OPERATIONS) {
        throw invalidToken(`"uc.restrictions.limits.operations" must be an integer from 1 to ${MAX_OPERATIONS}`);
      }
      operations = ops;
    }
  }
  return { scope, operations };
}

function objectWithKeys(v: unknown, path: string, allowed: string[]): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw invalidToken(`"${path}" must be an object`);
  const unknown = Object.keys(v).find((k) => !allowed.includes(k));
  if (unknown !== undefined) throw invalidToken(`unknown key "${path}.${unknown.slice(0, 64)}"`);
  return v as Record<string, unknown>;
}

/** A legacy upload signature: hex HMAC-SHA256 of `expire` (as sent) keyed with a secret key. */
export function uploadSignature(secret: string, expire: string): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(expire).digest('hex');
}

/** Legacy signed uploads: `uploadSignature` with an active secret key, valid until `expire`. */
function verifySignature(signature: string | undefined, expire: string | undefined, secrets: readonly string[], nowMs: number): UploadGrant {
  if (!signature) throw uploadErrors.signatureRequired();
  if (!expire) throw uploadErrors.expireRequired();
  if (!/^\d{1,15}$/.test(expire)) throw uploadErrors.expireInvalid();
  if (Number(expire) * 1000 < nowMs) throw uploadErrors.signatureExpired();
  const given = signature.toLowerCase();
  // Check every key without stopping early, so timing does not tell which (if any) matched.
  let ok = false;
  for (const secret of secrets) {
    ok = constantTimeEqual(uploadSignature(secret, expire), given) || ok;
  }
  if (!ok) throw uploadErrors.signatureInvalid();
  return { kind: 'signature', tokenId: sha256Hex(signature), operationsLimit: null, scope: null };
}

const sha256Hex = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex');

/** Compares digests of both sides, so neither content nor length leaks through timing. */
export function constantTimeEqual(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}

/**
 * Upload API parameters arrive as query string, urlencoded or multipart fields, merged (body wins).
 * This module names the fields that carry the public key under every name the clients use (the
 * project is found in request-flow.ts); the other fields are route schemas (fields.ts).
 */
import { uploadErrors } from '../../core/error-catalogue/upload.js';

export type Params = Map<string, string>;

/**
 * The field names carrying the public key, in the order they are read: neutral, the SDK's (base,
 * multipart; only with `sdkAliases`) and `pub_key` (the other endpoints). The throttle reads the
 * same list to find the project a request counts against.
 */
export function publicKeyFields(aliases: boolean): readonly string[] {
  return aliases ? ['SVC_PUB_KEY', 'UPLOADCARE_PUB_KEY', 'pub_key'] : ['SVC_PUB_KEY', 'pub_key'];
}

export function firstOf(params: Params, names: readonly string[]): string | undefined {
  for (const n of names) {
    const v = params.get(n);
    if (v !== undefined) return v;
  }
  return undefined;
}

/**
 * The key in the JS SDK's client header (`UploadcareUploadClient/<version>/<pubkey> (…)`, sent as
 * X-UC-User-Agent, or User-Agent by older clients): the SDK sends multipart bodies with the key
 * field after the file, so this is the only key it names before the body. A claim, never proof.
 */
export function sdkHeaderKey(headers: Record<string, string | string[] | undefined>): string | null {
  const ua = headers['x-uc-user-agent'] ?? headers['user-agent'];
  const m = typeof ua === 'string' ? /^[\w.-]+\/[\w.-]+\/([\w-]+)/.exec(ua) : null;
  return m?.[1] ?? null;
}

export function queryParams(query: unknown): Params {
  const out: Params = new Map();
  for (const [k, v] of Object.entries((query ?? {}) as Record<string, unknown>)) {
    const value = Array.isArray(v) ? v[v.length - 1] : v;
    if (typeof value === 'string') out.set(k, value);
  }
  return out;
}

/** Refuses NUL characters anywhere in a parameter (wire: NullCharactersForbiddenError). */
export function checkNoNulls(params: Params): void {
  for (const [k, v] of params) {
    if (k.includes('\0') || v.includes('\0')) throw uploadErrors.nullCharacters();
  }
}

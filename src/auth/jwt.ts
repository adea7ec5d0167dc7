/**
 * HS256 JWT signature check against a set of project secret keys (upload tokens).
 *
 * Only the signature and the token's shape are checked here; claim rules belong to the caller,
 * because the spec's rules (30 s skew on iat, 24 h lifetime, nbf ignored) differ from jose's
 * jwtVerify defaults. compactVerify is used so jose enforces no claim semantics of its own.
 */
import { createHash } from 'node:crypto';
import { compactVerify, errors } from 'jose';
import { uploadErrors } from '../core/error-catalogue/upload.js';

/** AccessTokenInvalidError with the reason named, as the spec requires. */
export const invalidToken = uploadErrors.tokenInvalid;

/** The signing key is the raw 32-byte SHA-256 digest of the secret, not its hex text. */
export const signingKey = (secret: string): Uint8Array => createHash('sha256').update(secret, 'utf8').digest();

/**
 * Returns the token's JSON payload when its HS256 signature matches any of `secrets`.
 * Throws AccessTokenInvalidError (401) for an unreadable token, another alg, or no matching key.
 */
export async function verifyHs256(token: string, secrets: readonly string[]): Promise<Record<string, unknown>> {
  if (!/^[\w-]+\.[\w-]*\.[\w-]+$/.test(token)) throw invalidToken('the token is not a readable JWT');
  let payload: Uint8Array | null = null;
  for (const secret of secrets) {
    try {
      ({ payload } = await compactVerify(token, signingKey(secret), { algorithms: ['HS256'] }));
      break;
    } catch (err) {
      if (err instanceof errors.JWSSignatureVerificationFailed) continue; // try the next key
      if (err instanceof errors.JOSEAlgNotAllowed) throw invalidToken('the token must be signed with HS256');
      throw invalidToken('the token is not a readable JWT');
    }
  }
  if (!payload) throw invalidToken('the signature matches no secret key');
  let claims: unknown;
  try {
    claims = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(payload));
  } catch {
    throw invalidToken('the token payload is not JSON');
  }
  if (typeof claims !== 'object' || claims === null || Array.isArray(claims)) {
    throw invalidToken('the token payload is not a JSON object');
  }
  return claims as Record<string, unknown>;
}

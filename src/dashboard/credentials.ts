/**
 * What the pages of a signed-in session need to work on projects that require signatures: an
 * upload signature for the widget (projects with signed uploads) and a CDN token for thumbnails
 * and previews (projects with signed CDN URLs). The server makes them with the project's keys, so
 * the secret key still never reaches a page; each is short-lived (the page asks again).
 */
import { mintCdnToken } from '../auth/cdn-token.js';
import { uploadSignature } from '../auth/upload-credentials.js';
import type { AppContext } from '../context.js';
import type { SessionRow } from './repo.js';

/** How long an upload signature or a CDN token handed to a page lives, at most (never past the session). */
export const PAGE_CREDENTIAL_TTL_S = 3600;

export interface UploadSignature {
  secure_signature: string;
  /** Unix seconds, as the widget and the Upload API take it. */
  secure_expire: number;
}

export interface CdnGrantForPage {
  /** `?token=` value granting every CDN path of the project (acl `/*`). */
  token: string;
  expires_at: string;
}

const expiryFor = (session: SessionRow, nowMs: number): number =>
  Math.min(Math.floor(nowMs / 1000) + PAGE_CREDENTIAL_TTL_S, Math.floor(session.expiresUs / 1_000_000));

/** A legacy upload signature (HMAC-SHA256 of `expire` with an active secret key), or null when the project does not require one. */
export async function uploadSignatureFor(ctx: AppContext, session: SessionRow, nowMs = Date.now()): Promise<UploadSignature | null> {
  const found = await ctx.projects.lookup(session.pubKey);
  const secret = found?.secrets[0];
  if (!found || !found.project.signedUploads || secret === undefined) return null;
  const expire = expiryFor(session, nowMs);
  return { secure_signature: uploadSignature(secret, String(expire)), secure_expire: expire };
}

/** A CDN token for the whole project, or null when its CDN URLs need none. */
export async function cdnGrantFor(ctx: AppContext, session: SessionRow, nowMs = Date.now()): Promise<CdnGrantForPage | null> {
  const found = await ctx.projects.lookup(session.pubKey);
  if (!found || !found.project.signedCdn) return null;
  const exp = expiryFor(session, nowMs);
  // Turning signed CDN URLs on made the key, so it is there; cdnKey() would make one otherwise.
  const key = found.project.cdnSecret ?? (await ctx.projects.cdnKey(session.pubKey));
  const token = mintCdnToken(key, { acl: '/*' }, exp);
  return { token, expires_at: new Date(exp * 1000).toISOString() };
}

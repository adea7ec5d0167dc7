/** The session cookie: reading it from a Cookie header and spelling its Set-Cookie. */

export const SESSION_COOKIE = 'stowage_dashboard';

/** The session cookie's value, or null when the header has none (or a malformed one). */
export function sessionCookie(header: string | undefined): string | null {
  if (!header || header.length > 8192) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== SESSION_COOKIE) continue;
    const value = part.slice(eq + 1).trim();
    // Tokens are 43 characters of base64url: anything else is not ours.
    return /^[A-Za-z0-9_-]{43}$/.test(value) ? value : null;
  }
  return null;
}

/**
 * HttpOnly: page scripts never see it. SameSite=Strict: no other site's page makes the browser send
 * it. Path=/ because the dashboard calls the REST API's own paths (/files/, /groups/, …).
 */
export function setSessionCookie(token: string, maxAgeS: number, secure: boolean): string {
  return `${SESSION_COOKIE}=${token}; Path=/; Max-Age=${maxAgeS}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

export function clearSessionCookie(secure: boolean): string {
  return `${SESSION_COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

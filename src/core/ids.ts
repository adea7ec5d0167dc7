import crypto from 'node:crypto';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function newUuid(): string {
  return crypto.randomUUID();
}

/** Canonical lowercase UUID, or null when the text is not one. */
export function parseUuid(text: string): string | null {
  const lower = text.trim().toLowerCase();
  return UUID.test(lower) ? lower : null;
}

/** A random key of `bytes` bytes in lowercase hex (public and secret keys). */
export function randomHex(bytes: number): string {
  return crypto.randomBytes(bytes).toString('hex');
}

/** Compares two secrets in time independent of where they differ. */
export function safeEqual(a: string, b: string): boolean {
  const ha = crypto.createHash('sha256').update(a).digest();
  const hb = crypto.createHash('sha256').update(b).digest();
  return crypto.timingSafeEqual(ha, hb);
}

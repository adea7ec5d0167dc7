/**
 * Webhook payload signing (spec "Webhook payload signing"): `X-Uc-Signature: v1=<hex>`, the
 * lowercase hex HMAC-SHA256 of the exact body bytes keyed with the subscription's signing_secret.
 */
import crypto from 'node:crypto';

export const SIGNATURE_HEADER = 'X-Uc-Signature';

export function signatureHeader(secret: string, body: string | Buffer): string {
  return `v1=${crypto.createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest('hex')}`;
}

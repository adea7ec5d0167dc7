/** Response headers of every dashboard page, module and JSON answer. */
import type { FastifyReply } from 'fastify';
import type { AppContext } from '../context.js';

const originOf = (url: string): string => {
  try {
    return new URL(url).origin;
  } catch {
    return '';
  }
};

/**
 * Where the widget PUTs multipart parts with object storage: the bucket's endpoint, presigned
 * (docs/scale-out.md). Virtual-hosted addressing puts the bucket in a subdomain.
 */
function bucketSources(ctx: AppContext): string[] {
  const { s3Bucket, s3PublicEndpoint, s3Endpoint, s3ForcePathStyle } = ctx.config;
  if (!s3Bucket) return [];
  const endpoint = s3PublicEndpoint ?? s3Endpoint;
  if (!endpoint) return ['https://*.amazonaws.com'];
  const u = new URL(endpoint);
  return s3ForcePathStyle ? [u.origin] : [u.origin, `${u.protocol}//*.${u.host}`];
}

/**
 * Scripts only from this server (no inline script, no eval), images from here and the CDN,
 * media from the CDN, fetches to here, the CDN, the Upload API and the bucket (the widget). Styles: the widget sets style attributes in its
 * templates, so inline styles are allowed; they cannot run code.
 */
export function contentSecurityPolicy(ctx: AppContext): string {
  const cdn = originOf(ctx.bases.cdn);
  const upload = originOf(ctx.bases.upload);
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    `img-src 'self' data: blob: ${cdn}`,
    // Video and audio previews play from the CDN; a text preview reads its first bytes from it.
    `media-src ${cdn}`,
    `connect-src 'self' ${[upload, cdn, ...bucketSources(ctx)].join(' ')}`,
    "font-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

export function securityHeaders(reply: FastifyReply, ctx: AppContext, cache: 'no-store' | 'no-cache'): FastifyReply {
  return reply
    .header('content-security-policy', contentSecurityPolicy(ctx))
    .header('x-content-type-options', 'nosniff')
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', 'same-origin')
    .header('cache-control', cache);
}

/** CDN error pages (wire-reference §3.3): small HTML pages, sandboxed by CSP, cacheable for an hour. */
import type { ServerResponse } from 'node:http';
import type { AppError } from '../../core/errors.js';

const TITLES: Record<number, string> = { 400: 'Bad Request', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed', 416: 'Range Not Satisfiable', 500: 'Internal Server Error', 501: 'Not Implemented', 503: 'Service Unavailable', 507: 'Insufficient Storage' };

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Answers `err` (an entry of the error catalogue) as the CDN's error page. */
export function sendCdnError(res: ServerResponse, err: AppError): void {
  const { status, message, headers } = err;
  const title = `${status}: ${TITLES[status] ?? 'Error'}`;
  const body = `<!DOCTYPE html><html><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1><p>${escapeHtml(message)}</p></body></html>\n`;
  res.writeHead(status, {
    'content-type': 'text/html; charset=UTF-8',
    'content-length': Buffer.byteLength(body),
    'content-security-policy': "sandbox; default-src 'unsafe-inline' data:; script-src 'none'",
    'cache-control': status >= 500 ? 'no-store' : 'public, max-age=3600',
    'access-control-allow-origin': '*',
    ...headers,
  });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}

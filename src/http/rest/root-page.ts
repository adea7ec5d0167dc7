/**
 * `GET /` on the REST surface: the URL the start banner prints, so the first one a new user opens.
 * A browser (Accept names text/html) gets a short page pointing to the dashboard and the docs
 * pages; any other client a JSON 404 that names them. Not part of the API: no Accept version
 * check, credentials or throttle (an open route), and left out of the OpenAPI document.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { sendJson } from '../common/json.js';
import type { RouteDoc } from '../common/route.js';

const HIDDEN: RouteDoc = { summary: 'Root page', tags: [], security: [], responses: {}, hidden: true };

// No script, no style from elsewhere: the page is text and links.
const PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** A browser's Accept (text/html before any JSON type), not an API client's. */
export function wantsHtml(accept: string | undefined): boolean {
  const types = (accept ?? '').split(',').map((t) => t.split(';')[0]?.trim().toLowerCase() ?? '');
  const html = types.findIndex((t) => t === 'text/html' || t === 'application/xhtml+xml');
  const json = types.findIndex((t) => t.endsWith('json'));
  return html >= 0 && (json < 0 || html < json);
}

const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function serveRootPage(app: FastifyInstance, ctx: AppContext): void {
  // Every page a browser opens here (the dashboard, the docs) makes it ask for this: a plain 404,
  // not the API's 406 for a request without the version in Accept.
  app.get('/favicon.ico', { config: { openapi: HIDDEN, openRoute: true } }, async (_req, reply) => reply.code(404).header('cache-control', 'public, max-age=86400').send());
  app.get('/', { config: { openapi: HIDDEN, openRoute: true } }, async (req: FastifyRequest, reply) => {
    if (!wantsHtml(req.headers.accept)) {
      return sendJson(reply, 404, { detail: 'Not found. This is the REST API of Stowage: its documentation is at /docs/ (/openapi.json), the dashboard at /dashboard/.' });
    }
    return reply
      .code(200)
      .header('content-type', 'text/html; charset=utf-8')
      .header('content-security-policy', PAGE_CSP)
      .header('x-content-type-options', 'nosniff')
      .header('cache-control', 'no-cache')
      .send(Buffer.from(rootHtml(ctx.bases.upload, ctx.bases.cdn)));
  });
}

function rootHtml(upload: string, cdn: string): string {
  const uploadDocs = upload ? `<li><a href="${escapeHtml(upload)}/docs/">Upload API reference</a> (${escapeHtml(upload)}/)</li>` : '';
  const cdnLine = cdn ? `<li>CDN: <code>${escapeHtml(cdn)}/&lt;uuid&gt;/</code></li>` : '';
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Stowage</title>
<style>body{font-family:system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;color:#1d232b}a{color:#1d5fbf}code{background:#eef1f4;padding:0 .2rem}</style>
</head>
<body>
<h1>Stowage</h1>
<p>This is the REST API of a Stowage server. It answers programs that send the API version in <code>Accept</code> and a signed <code>Authorization</code> header (the reference below says how). In a browser, start here:</p>
<ul>
<li><a href="/dashboard/">Dashboard</a>: sign in with a project's public and secret key to browse, upload and manage files</li>
<li><a href="/docs/">REST API reference</a> (<a href="/openapi.json">OpenAPI document</a>)</li>
${uploadDocs}
${cdnLine}
</ul>
</body>
</html>
`;
}

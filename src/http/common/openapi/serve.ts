/**
 * `GET /openapi.json` and the browsable page `/docs/` on a surface. The page is Swagger UI
 * (swagger-ui-dist, Apache-2.0) served from node_modules by Stowage itself: a fixed list of assets,
 * no request to the Internet (the Content-Security-Policy allows only this origin).
 */
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { RouteDoc } from '../route.js';
import type { CatalogEntry } from './catalog.js';
import { buildDocument, type DocumentInfo } from './document.js';
import { commonErrors } from '../../../core/error-catalogue/common.js';

const HIDDEN: RouteDoc = { summary: 'API document', tags: [], security: [], responses: {}, hidden: true };

const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css',
  'swagger-ui-bundle.js': 'application/javascript',
  'favicon-32x32.png': 'image/png',
};

const PAGE_CSP = "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

export interface DocsPageOptions {
  /**
   * A header "Try it out" adds to a request that carries no Authorization: on REST, the dashboard's
   * header, so that a dashboard session open in the same browser authorises the page's calls.
   */
  sessionHeader?: string;
}

/** Registers the document and its page; `info` is read at the first request (base URLs are known by then). */
export function serveOpenApi(app: FastifyInstance, entries: readonly CatalogEntry[], info: () => DocumentInfo, options: DocsPageOptions = {}): void {
  const initJs = Buffer.from(pageScript(options.sessionHeader));
  let document: Buffer | undefined;
  // An open route (src/http/rest/server.ts): no Accept check, credentials or API throttle.
  const config = { openapi: HIDDEN, openRoute: true };
  app.get('/openapi.json', { config }, async (_req, reply) => {
    document ??= Buffer.from(JSON.stringify(buildDocument(info(), entries)));
    // A Buffer, as sendJson does: no charset suffix.
    return reply.code(200).header('content-type', 'application/json').header('cache-control', 'no-cache').send(document);
  });
  app.get('/docs', { config }, async (_req, reply) => reply.redirect('/docs/', 301));
  app.get('/docs/', { config }, async (_req, reply) => page(reply, 'text/html; charset=utf-8', Buffer.from(pageHtml(info().title))));
  app.get('/docs/init.js', { config }, async (_req, reply) => page(reply, 'application/javascript', initJs));
  app.get('/docs/:asset', { config }, async (req, reply) => {
    const name = (req.params as { asset: string }).asset;
    const type = Object.prototype.hasOwnProperty.call(ASSETS, name) ? ASSETS[name] : undefined;
    if (!type) throw commonErrors.notFound(); // both surfaces render it as their 404
    return page(reply, type, asset(name)).header('cache-control', 'public, max-age=86400');
  });
}

function page(reply: FastifyReply, type: string, body: Buffer): FastifyReply {
  return reply.code(200).header('content-type', type).header('content-security-policy', PAGE_CSP).header('x-content-type-options', 'nosniff').send(body);
}

const assetCache = new Map<string, Buffer>();
function asset(name: string): Buffer {
  let bytes = assetCache.get(name);
  if (!bytes) {
    const dir = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
    bytes = fs.readFileSync(path.join(dir, name));
    assetCache.set(name, bytes);
  }
  return bytes;
}

const escapeHtml = (s: string) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

function pageHtml(title: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="./swagger-ui.css">
<link rel="icon" type="image/png" href="./favicon-32x32.png">
</head>
<body>
<div id="docs"></div>
<script src="./swagger-ui-bundle.js"></script>
<script src="./init.js"></script>
</body>
</html>
`;
}

/**
 * validatorUrl null: Swagger UI would otherwise send the document to validator.swagger.io. The
 * request interceptor adds the session header (a header name we chose, JSON-quoted) only to calls
 * without an Authorization of their own, and the browser sends the session cookie with them
 * because the page and the API share an origin.
 */
function pageScript(sessionHeader: string | undefined): string {
  const interceptor = sessionHeader
    ? `
  requestInterceptor: (req) => {
    const auth = Object.keys(req.headers || {}).some((k) => k.toLowerCase() === 'authorization');
    if (!auth) req.headers[${JSON.stringify(sessionHeader)}] = '1';
    return req;
  },`
    : '';
  return `window.ui = SwaggerUIBundle({
  url: '../openapi.json',
  dom_id: '#docs',
  deepLinking: true,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',${interceptor}
});
`;
}

/**
 * The dashboard's own routes on the REST surface (open routes: they authenticate by themselves):
 * its pages and modules, the widget's files, sign-in, sign-out and "who am I". Everything else the
 * pages show comes from the REST API itself, called with the session cookie (docs/dashboard.md).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import type { RoutePlugin } from '../feature.js';
import { jsonBody, sendJson } from '../http/common/json.js';
import type { Asset } from './assets.js';
import { cdnGrantFor, uploadSignatureFor } from './credentials.js';
import { clearSessionCookie, sessionCookie, setSessionCookie } from './cookies.js';
import type { Guards } from './guards.js';
import { securityHeaders } from './headers.js';
import type { UsageSource } from './usage.js';
import type { SessionService, SignInInput } from './sessions.js';
import { adminErrors } from '../core/error-catalogue/admin.js';
import { restErrors } from '../core/error-catalogue/rest.js';

export interface DashboardAssets {
  pages: Map<string, Asset>;
  widget: Map<string, Asset>;
}

export function dashboardRoutes(ctx: AppContext, sessions: SessionService, guards: Guards, assets: DashboardAssets, usage: UsageSource): RoutePlugin {
  const serve = (reply: FastifyReply, table: Map<string, Asset>, name: string) => {
    const asset = table.get(name);
    if (!asset) throw restErrors.notFound();
    return securityHeaders(reply, ctx, name.endsWith('.html') ? 'no-store' : 'no-cache').type(asset.contentType).send(asset.body);
  };

  return async (app) => {
    app.get('/dashboard', async (_req, reply) => reply.redirect('/dashboard/'));
    app.get('/dashboard/', async (_req, reply) => serve(reply, assets.pages, 'index.html'));
    app.get('/dashboard/:name', async (req, reply) => serve(reply, assets.pages, (req.params as { name: string }).name));
    app.get('/dashboard/uc/:name', async (req, reply) => serve(reply, assets.widget, (req.params as { name: string }).name));

    app.post('/dashboard/api/login', async (req, reply) => {
      guards.requireSameOrigin(req);
      guards.requireSafeTransport(req);
      const signedIn = await sessions.signIn(signInInput(jsonBody(req)));
      reply.header('set-cookie', setSessionCookie(signedIn.token, signedIn.maxAgeS, guards.secure(req)));
      return sendJson(securityHeaders(reply, ctx, 'no-store'), 200, { project: { name: signedIn.projectName } });
    });

    app.post('/dashboard/api/logout', async (req, reply) => {
      guards.requireSameOrigin(req);
      const token = sessionCookie(req.headers.cookie);
      if (token !== null) await sessions.signOut(token);
      reply.header('set-cookie', clearSessionCookie(guards.secure(req)));
      return securityHeaders(reply, ctx, 'no-store').code(204).send();
    });

    app.get('/dashboard/api/session', async (req: FastifyRequest, reply) => {
      // Only the pages' own calls (the dashboard header), like every answer about a session.
      guards.requireDashboardHeader(req);
      const token = sessionCookie(req.headers.cookie);
      const session = token === null ? null : await sessions.resolve(token);
      const project = session ? await ctx.projects.lookup(session.pubKey) : null;
      // Not signed in is an answer, not an error: the page shows the sign-in form.
      if (!session || !project) return sendJson(securityHeaders(reply, ctx, 'no-store'), 200, { signed_in: false });
      return sendJson(securityHeaders(reply, ctx, 'no-store'), 200, {
        signed_in: true,
        project: { name: project.project.name, pub_key: session.pubKey, signed_uploads: project.project.signedUploads },
        upload_base: ctx.bases.upload,
        cdn_base: ctx.bases.cdn,
        // Thumbnails and previews of a project with signed CDN URLs carry this token (the page asks again before it expires).
        cdn_token: await cdnGrantFor(ctx, session),
        widget: assets.widget.size > 0,
        expires_at: new Date(Math.floor(session.expiresUs / 1000)).toISOString(),
      });
    });

    // The files page's usage strip: files and bytes, stored and not (no REST route sums sizes).
    app.get('/dashboard/api/usage', async (req: FastifyRequest, reply) => {
      const session = await guards.pageSession(req);
      return sendJson(securityHeaders(reply, ctx, 'no-store'), 200, await usage.forProject(session.projectId));
    });

    // The widget's signature resolver calls this before each upload into a project with signed uploads.
    app.get('/dashboard/api/upload-signature', async (req: FastifyRequest, reply) => {
      const session = await guards.pageSession(req);
      const signature = await uploadSignatureFor(ctx, session);
      if (!signature) throw adminErrors.notSigned();
      return sendJson(securityHeaders(reply, ctx, 'no-store'), 200, signature);
    });
  };
}

/** The sign-in body: `public_key` with `secret_key` or `admin_token`; anything else is a 400. */
function signInInput(body: unknown): SignInInput {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw adminErrors.bodyNotObject();
  const o = body as Record<string, unknown>;
  const str = (k: string, max: number): string | undefined => {
    const v = o[k];
    if (v === undefined || v === '') return undefined;
    if (typeof v !== 'string' || v.length > max) throw adminErrors.bodyFieldTooLong(k, max);
    return v;
  };
  const publicKey = str('public_key', 64);
  const secretKey = str('secret_key', 128);
  const adminToken = str('admin_token', 512);
  if (!publicKey) throw adminErrors.publicKeyMissing();
  if ((secretKey === undefined) === (adminToken === undefined)) throw adminErrors.secretOrToken();
  return { publicKey, ...(secretKey !== undefined ? { secretKey } : {}), ...(adminToken !== undefined ? { adminToken } : {}) };
}

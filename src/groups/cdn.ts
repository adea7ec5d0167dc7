/**
 * CDN group URLs (cdn-url-api.md, wire-reference §3.1), contributed by the groups feature:
 *   /<group>~N/                         HTML page listing each file's index, URL and uuid
 *   /<group>~N/nth/<i>/[-/ops/][name]   the i-th file; the group's default_effects apply first
 *   /<group>~N/archive/zip|tar/[name]   the original files as one streamed archive
 */
import type { ServerResponse } from 'node:http';
import type { AppContext } from '../context.js';
import type { FileRecord } from '../core/file-record.js';
import type { DeliverFile } from '../feature.js';
import { sendCdnError } from '../http/cdn/errors.js';
import { requireCdnAccess } from '../http/cdn/access.js';
import type { CdnHandlers } from '../feature.js';
import { appendPlan } from '../media/plan.js';
import { sendArchive } from './archive.js';
import { effectsPlan } from './file-ref.js';
import { groupId, type GroupService } from './service.js';
import type { GroupRecord } from './repo.js';
import { cdnErrors } from '../core/error-catalogue/media.js';

export function groupCdnHandler(ctx: AppContext, groups: GroupService, deliver: DeliverFile): CdnHandlers['group'] {
  return async (req, res, request) => {
    const g = await groups.find(null, request.groupId);
    if (!g) return sendCdnError(res, cdnErrors.groupNotFound());
    await requireCdnAccess(ctx, req, g.projectId);
    const { view } = request;
    switch (view.kind) {
      case 'page':
        return sendListing(ctx, res, g, groups);
      case 'archive': {
        const entries = await groups.entries(g);
        return sendArchive(req, res, ctx.blobs, entries.map((e) => e.file), {
          format: view.format,
          filename: request.filename ?? `${groupId(g)}.${view.format}`,
          maxBytes: ctx.config.groupArchiveMaxBytes,
        });
      }
      case 'nth': {
        if (view.index >= g.filesCount) return sendCdnError(res, cdnErrors.noGroupIndex());
        const member = await groups.member(g, view.index);
        const file = member ? await deliverable(ctx, member.fileUuid) : null;
        if (!member || !file) return sendCdnError(res, cdnErrors.fileNotFound());
        // The group's own operations first, then the URL's (spec: "applied first").
        return deliver(req, res, file, { plan: appendPlan(effectsPlan(member.effects), view.plan), filename: request.filename });
      }
    }
  };
}

async function deliverable(ctx: AppContext, uuid: string): Promise<FileRecord | null> {
  const f = await ctx.files.byUuid(uuid);
  return f && f.removedUs === null && f.blobKey ? f : null;
}

async function sendListing(ctx: AppContext, res: ServerResponse, g: GroupRecord, groups: GroupService): Promise<void> {
  const id = groupId(g);
  const entries = await groups.entries(g);
  const rows = entries.map((e, i) => {
    const url = `${ctx.bases.cdn}/${id}/nth/${i}/`;
    const uuid = e.file ? esc(e.file.uuid) : '(removed)';
    return `<li data-index="${i}"><a href="${esc(url)}">${esc(url)}</a> <code>${uuid}</code>${e.effects ? ` <code>-/${esc(e.effects)}</code>` : ''}</li>`;
  });
  const body = `<!DOCTYPE html><html><head><meta charset="utf-8"><title>Group ${esc(id)}</title></head><body><h1>Group ${esc(id)}</h1><p>${g.filesCount} files</p><ol start="0">${rows.join('')}</ol></body></html>\n`;
  res.writeHead(200, {
    'content-type': 'text/html; charset=UTF-8',
    'content-length': Buffer.byteLength(body),
    'content-security-policy': "sandbox; default-src 'none'",
    'cache-control': 'public, max-age=3600',
    'access-control-allow-origin': '*',
  });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}

function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

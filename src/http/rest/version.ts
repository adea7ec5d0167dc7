/**
 * REST API versions (spec "Versioning"): the `Accept` header names one, parsed once per request in
 * the server's preHandler; routes and response shapers read `req.apiVersion`. Only 0.7 (current)
 * and 0.6 (legacy field names, docs/rest-v06.md) are served; anything else is the spec's 406.
 */
import type { RestVersion } from '../../core/file-json.js';
import { restErrors } from '../../core/error-catalogue/rest.js';

export type { RestVersion };

/** Neutral media types, and the official SDKs' spellings of the same (only with `sdkAliases`). */
const NEUTRAL: Record<string, RestVersion> = { 'application/vnd.svc-v0.7+json': '0.7', 'application/vnd.svc-v0.6+json': '0.6' };
const SDK: Record<string, RestVersion> = { 'application/vnd.uploadcare-v0.7+json': '0.7', 'application/vnd.uploadcare-v0.6+json': '0.6' };

/** The first media type of `Accept` that names a served version, in the client's order. */
export function parseRestVersion(accept: string | undefined, aliases: boolean): RestVersion {
  // A client sends the same Accept on every request: the last answer is kept (errors are not).
  if (accept === last.accept && aliases === last.aliases && last.version !== null) return last.version;
  const version = parseAccept(accept, aliases);
  Object.assign(last, { accept, aliases, version });
  return version;
}

const last: { accept: string | undefined; aliases: boolean; version: RestVersion | null } = { accept: undefined, aliases: false, version: null };

function parseAccept(accept: string | undefined, aliases: boolean): RestVersion {
  for (const item of (accept ?? '').split(',')) {
    const type = item.split(';')[0]?.trim().toLowerCase() ?? '';
    const version = NEUTRAL[type] ?? (aliases ? SDK[type] : undefined);
    if (version) return version;
  }
  throw restErrors.notAcceptable();
}

/** For routes that exist in one version only: the same 404 an unknown path gets. */
export function requireVersion(actual: RestVersion, wanted: RestVersion): void {
  if (actual !== wanted) throw restErrors.notFound();
}

/**
 * The query parameters of GET /files/ and GET /files/{uuid}/ as route schemas. They depend on the
 * API version (v0.6 adds `ordering=size` and spells `include=appdata` as
 * `add_fields=rekognition_info`), so there is one schema per version: the routes are `deferred`
 * and document the v0.7 one; the handler validates with the request's version's schema.
 * `from`/`to` are read by the handler: what they hold (a time or a size) depends on `ordering`.
 */
import { z } from 'zod';
import type { RestVersion } from '../core/file-json.js';
import { normalizeTags } from '../core/tags.js';
import { checked } from '../http/common/route.js';
import { includeParam, queryParam } from '../http/rest/query.js';
import { restInput } from '../http/rest/route.js';
import { fileOrdering, type FileOrdering } from './list-order.js';
import { restErrors } from '../core/error-catalogue/rest.js';

const MAX_TAGS = 10;
const text = () => z.string().optional();

/** `tags=a,b`: only files carrying every listed tag (docs/files.md). */
function tagsOf(v: string | undefined): string[] {
  if (v === undefined || v === '') return [];
  const tags = normalizeTags(v.split(',').filter((t) => t.trim() !== ''), 'tags');
  if (tags.length > MAX_TAGS) throw restErrors.tooManyTags(MAX_TAGS);
  return tags;
}

const ordering = (version: RestVersion) =>
  checked(text(), (v): FileOrdering => fileOrdering({ ordering: v }, version)).meta({
    description: version === '0.6' ? '`datetime_uploaded` (default), `size`, or either with `-` (newest / largest first).' : '`datetime_uploaded` (default) or `-datetime_uploaded`; v0.6 also `size` / `-size`.',
  });

const extras = (name: string, value: string, description: string) => checked(text(), (v) => includeParam({ [name]: v }, [value], name).has(value)).meta({ description });

const param = (description: string) => text().meta({ description });
const from = param('Start after this upload time (ISO 8601), or size with `ordering=size` (v0.6).');
const to = param('End before this upload time (ISO 8601), or size with `ordering=size` (v0.6).');
const tags = checked(text(), tagsOf).meta({ description: `Comma-separated tags: only files carrying all of them (at most ${MAX_TAGS}).` });
const include = extras('include', 'appdata', '`appdata` to include add-on results (v0.6: `add_fields=rekognition_info`).');
const addFields = extras('add_fields', 'rekognition_info', 'v0.6: `rekognition_info` to include add-on results.');

// Keys in the order the checks always ran: the first bad one is the one reported.
const head = (version: RestVersion) => ({
  removed: queryParam.bool('removed', 'Removed files instead of live ones (default false)'),
  stored: queryParam.bool('stored', 'Only stored, or only unstored, files'),
  limit: queryParam.limit(),
  ordering: ordering(version),
  offset: queryParam.offset(),
});

/** The v0.7 list query (the one documented). */
export const listQueryV07 = z.object({ ...head('0.7'), include, tags, from, to });
const listQueryV06 = z.object({ ...head('0.6'), add_fields: addFields, tags, from, to });

export interface ListQuery {
  removed: boolean;
  stored: boolean | null;
  limit: number;
  ordering: FileOrdering;
  extras: boolean;
  tags: string[];
}

/** The list query in the request's version; a bad parameter throws its historical 400. */
export function listQueryOf(version: RestVersion, raw: Record<string, string | undefined>): ListQuery {
  if (version === '0.6') {
    const q = restInput(listQueryV06, raw);
    return { removed: q.removed ?? false, stored: q.stored, limit: q.limit, ordering: q.ordering, extras: q.add_fields, tags: q.tags };
  }
  const q = restInput(listQueryV07, raw);
  return { removed: q.removed ?? false, stored: q.stored, limit: q.limit, ordering: q.ordering, extras: q.include, tags: q.tags };
}

/** GET /files/{uuid}/: only the extras parameter. */
export const infoQueryV07 = z.object({ include });
const infoQueryV06 = z.object({ add_fields: addFields });

/** Whether the request asks for add-on results, in its version's spelling. */
export function infoExtrasOf(version: RestVersion, raw: Record<string, string | undefined>): boolean {
  return version === '0.6' ? restInput(infoQueryV06, raw).add_fields : restInput(infoQueryV07, raw).include;
}

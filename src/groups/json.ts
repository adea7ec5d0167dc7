/** Wire shapes of a group, declared once as schemas: the Upload API's (wire-reference §1.9) and the REST API's (§2.8). */
import { z } from 'zod';
import type { RestVersion, UrlBases } from '../core/file-json.js';
import { uploadInfoJson } from '../core/file-json.js';
import { restFileFor } from '../core/file-json-v06.js';
import { restFileSchema, restFileV06Schema, uploadInfoSchema } from '../core/wire-shapes.js';
import { formatUs, formatUsOrNull } from '../core/time.js';
import type { GroupRecord } from './repo.js';
import { groupId, type GroupEntry } from './service.js';

/**
 * The list form: no `files`. `datetime_stored` is deprecated in v0.7 and kept as null (spec lists
 * it); v0.6 (which stores groups) shows it on a group's own object once all its files are stored.
 */
export const groupSummarySchema = z.object({
  id: z.string(),
  datetime_created: z.string(),
  datetime_stored: z.string().nullable(),
  files_count: z.number().int(),
  cdn_url: z.string(),
  url: z.string(),
});

/** A member file with the operations its group entry carried; null where the file is gone. */
const member = <F extends z.ZodObject>(file: F) => file.extend({ default_effects: z.string() }).nullable();

export const uploadGroupSchema = groupSummarySchema.extend({ files: z.array(member(uploadInfoSchema)) });

export const restGroupSchema = groupSummarySchema.extend({
  files: z.array(z.union([member(restFileSchema), member(restFileV06Schema)])).meta({ description: 'Member files in order (REST file objects with `default_effects`); null where a file is gone.' }),
});

export type GroupSummaryJson = z.output<typeof groupSummarySchema>;
export type UploadGroupJson = z.output<typeof uploadGroupSchema>;
export type RestGroupJson = z.output<typeof restGroupSchema>;

export function groupSummaryJson(g: GroupRecord, bases: UrlBases): GroupSummaryJson {
  const id = groupId(g);
  return {
    id,
    datetime_created: formatUs(g.createdUs),
    datetime_stored: null,
    files_count: g.filesCount,
    cdn_url: `${bases.cdn}/${id}/`,
    url: `${bases.rest}/groups/${id}/`,
  };
}

export function uploadGroupJson(g: GroupRecord, entries: GroupEntry[], bases: UrlBases): UploadGroupJson {
  return {
    ...groupSummaryJson(g, bases),
    files: entries.map((e) => (e.file ? { ...uploadInfoJson(e.file), default_effects: e.effects } : null)),
  };
}

export function restGroupJson(g: GroupRecord, entries: GroupEntry[], bases: UrlBases, version: RestVersion = '0.7'): RestGroupJson {
  return {
    ...groupSummaryJson(g, bases),
    ...(version === '0.6' && { datetime_stored: formatUsOrNull(groupStoredUs(entries)) }),
    files: entries.map((e) => (e.file ? { ...restFileFor(version, e.file, bases), default_effects: e.effects } : null)),
  };
}

/** When the group's last live file was stored; null while one is not (or none is left). */
function groupStoredUs(entries: GroupEntry[]): number | null {
  const times = entries.map((e) => (e.file ? e.file.storedUs : undefined)).filter((t): t is number | null => t !== undefined);
  if (times.length === 0 || times.some((t) => t === null)) return null;
  return Math.max(...(times as number[]));
}

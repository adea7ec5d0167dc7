/** Wire shapes of a group: the Upload API's (wire-reference §1.9) and the REST API's (§2.8). */
import type { RestVersion, UploadInfoJson, UrlBases } from '../core/file-json.js';
import { uploadInfoJson } from '../core/file-json.js';
import { restFileFor, type AnyRestFileJson } from '../core/file-json-v06.js';
import { formatUs, formatUsOrNull } from '../core/time.js';
import type { GroupRecord } from './repo.js';
import { groupId, type GroupEntry } from './service.js';

/**
 * The list form: no `files`. `datetime_stored` is deprecated in v0.7 and kept as null (spec lists
 * it); v0.6 (which stores groups) shows it on a group's own object once all its files are stored.
 */
export interface GroupSummaryJson {
  id: string;
  datetime_created: string;
  datetime_stored: string | null;
  files_count: number;
  cdn_url: string;
  url: string;
}

/** A member file with the operations its group entry carried; null where the file is gone. */
type Member<F> = (F & { default_effects: string }) | null;

export interface UploadGroupJson extends GroupSummaryJson {
  files: Array<Member<UploadInfoJson>>;
}

export interface RestGroupJson extends GroupSummaryJson {
  files: Array<Member<AnyRestFileJson>>;
}

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

/** Wire shapes of a group: the Upload API's (wire-reference §1.9) and the REST API's (§2.8). */
import type { RestFileJson, UploadInfoJson, UrlBases } from '../core/file-json.js';
import { restFileJson, uploadInfoJson } from '../core/file-json.js';
import { formatUs } from '../core/time.js';
import type { GroupRecord } from './repo.js';
import { groupId, type GroupEntry } from './service.js';

/** The list form: no `files`. `datetime_stored` is deprecated and kept as null (spec lists it). */
export interface GroupSummaryJson {
  id: string;
  datetime_created: string;
  datetime_stored: null;
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
  files: Array<Member<RestFileJson>>;
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

export function restGroupJson(g: GroupRecord, entries: GroupEntry[], bases: UrlBases): RestGroupJson {
  return {
    ...groupSummaryJson(g, bases),
    files: entries.map((e) => (e.file ? { ...restFileJson(e.file, bases), default_effects: e.effects } : null)),
  };
}

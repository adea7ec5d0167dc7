/**
 * What the source answers, checked before anything is written: the REST v0.7 file and group
 * objects (wire-reference §2.3, §2.8) turned into what the target restores.
 */
import { z } from 'zod';
import { cleanOriginalFilename, sanitizeFilename, type ContentInfo } from '../core/file-record.js';
import { parseUuid } from '../core/ids.js';
import { validateMetadata } from '../core/metadata.js';
import { checkTagCount, normalizeTags } from '../core/tags.js';
import { parseDateToUs } from '../core/time.js';
import type { RestoredFile } from '../files/restore.js';
import type { GroupMember } from '../groups/repo.js';
import { PermanentError } from './retry.js';

const time = z.string().max(64);
const appdataEntry = z.object({ data: z.unknown(), version: z.string().max(64), datetime_created: time, datetime_updated: time });
const contentInfo = z.looseObject({ mime: z.object({ mime: z.string().max(255), type: z.string().max(127), subtype: z.string().max(127) }) });

const fileJson = z.object({
  uuid: z.string(),
  datetime_uploaded: time,
  datetime_stored: time.nullish(),
  datetime_removed: time.nullish(),
  original_filename: z.string().max(4096).nullish(),
  original_file_url: z.string().max(8192).nullish(),
  mime_type: z.string().max(255).nullish(),
  size: z.number().int().nonnegative(),
  is_image: z.boolean().nullish(),
  content_info: contentInfo.nullish(),
  metadata: z.record(z.string(), z.unknown()).nullish(),
  appdata: z.record(z.string().max(128), appdataEntry).nullish(),
  tags: z.array(z.unknown()).nullish(),
});

const page = z.object({ next: z.string().nullish(), total: z.number().int().nonnegative().nullish(), results: z.array(z.unknown()) });

export interface SourcePage {
  next: string | null;
  total: number | null;
  results: unknown[];
}

export function parsePage(body: unknown, what: string): SourcePage {
  const p = page.safeParse(body);
  if (!p.success) throw new PermanentError(`${what}: not a list page (${p.error.issues[0]?.message ?? 'unexpected shape'})`);
  return { next: p.data.next ?? null, total: p.data.total ?? null, results: p.data.results };
}

/** The uuid a list entry claims, for reporting an entry that fails validation. */
export function claimedUuid(entry: unknown): string {
  const u = (entry as { uuid?: unknown; id?: unknown } | null)?.uuid ?? (entry as { id?: unknown } | null)?.id;
  return typeof u === 'string' ? u.slice(0, 80) : '(no id)';
}

/** A source file: what the target restores, and where the source serves its bytes. */
export interface SourceFile extends RestoredFile {
  /** The source's `original_file_url` (null for removed files). */
  fileUrl: string | null;
}

export function parseFile(entry: unknown): SourceFile {
  const p = fileJson.safeParse(entry);
  if (!p.success) throw new PermanentError(`not a file object: ${p.error.issues[0]?.path.join('.') ?? ''} ${p.error.issues[0]?.message ?? ''}`.trim());
  const f = p.data;
  const uuid = parseUuid(f.uuid);
  if (!uuid) throw new PermanentError(`not a uuid: ${f.uuid}`);
  const original = cleanOriginalFilename(f.original_filename ?? undefined);
  let metadata: Record<string, string>;
  let tags: string[];
  try {
    metadata = validateMetadata(Object.entries(f.metadata ?? {}));
    tags = checkTagCount(normalizeTags(f.tags ?? []));
  } catch (err) {
    throw new PermanentError(`metadata or tags this server refuses: ${err instanceof Error ? err.message : String(err)}`);
  }
  return {
    uuid,
    originalFilename: original,
    filename: urlFilename(f.original_file_url, uuid) ?? sanitizeFilename(original),
    declaredType: f.mime_type ?? 'application/octet-stream',
    size: f.size,
    uploadedUs: requiredTime(f.datetime_uploaded, 'datetime_uploaded'),
    storedUs: optionalTime(f.datetime_stored, 'datetime_stored'),
    removedUs: optionalTime(f.datetime_removed, 'datetime_removed'),
    metadata,
    appdata: f.appdata ?? {},
    tags,
    isImage: f.is_image ?? false,
    contentInfo: (f.content_info as ContentInfo | null | undefined) ?? null,
    fileUrl: f.original_file_url ?? null,
  };
}

/**
 * The name in the source's CDN URL (`…/<uuid>/<name>`), so that URLs keep their path; null when
 * it is absent or holds characters this server would not put there.
 */
function urlFilename(url: string | null | undefined, uuid: string): string | null {
  if (!url) return null;
  const m = /\/([0-9a-fA-F-]{36})\/([^/?#]+)$/.exec(url);
  if (!m || m[1]?.toLowerCase() !== uuid) return null;
  const name = m[2] ?? '';
  return /^[A-Za-z0-9_.-]{1,255}$/.test(name) ? name : null;
}

function requiredTime(text: string, field: string): number {
  const us = parseDateToUs(text);
  if (us === null) throw new PermanentError(`${field} is not a date: ${text}`);
  return us;
}

function optionalTime(text: string | null | undefined, field: string): number | null {
  return text ? requiredTime(text, field) : null;
}

const groupSummary = z.object({ id: z.string().max(64), datetime_created: time, files_count: z.number().int().nonnegative() });
const groupDetail = groupSummary.extend({ files: z.array(z.object({ uuid: z.string(), default_effects: z.string().max(8192).nullish() }).loose().nullable()) });

export interface SourceGroup {
  /** `<uuid>~<count>` as the source names it. */
  id: string;
  uuid: string;
  createdUs: number;
  members: GroupMember[];
}

/** A member the source shows as null (its file removed): its uuid is not told, so it stays a gap. */
export const GONE_MEMBER = '00000000-0000-0000-0000-000000000000';

export function parseGroupSummary(entry: unknown): { id: string; count: number } {
  const p = groupSummary.safeParse(entry);
  if (!p.success) throw new PermanentError('not a group object');
  return { id: p.data.id, count: p.data.files_count };
}

export function parseGroup(body: unknown): SourceGroup {
  const p = groupDetail.safeParse(body);
  if (!p.success) throw new PermanentError(`not a group object: ${p.error.issues[0]?.path.join('.') ?? ''} ${p.error.issues[0]?.message ?? ''}`.trim());
  const g = p.data;
  const m = /^([0-9a-fA-F-]{36})~(\d+)$/.exec(g.id);
  const uuid = m ? parseUuid(m[1] ?? '') : null;
  if (!m || !uuid || Number(m[2]) !== g.files.length || g.files_count !== g.files.length) throw new PermanentError(`group ${g.id}: its id, files_count and files disagree`);
  const members = g.files.map((f): GroupMember => {
    if (!f) return { fileUuid: GONE_MEMBER, effects: '' };
    const fileUuid = parseUuid(f.uuid);
    if (!fileUuid) throw new PermanentError(`group ${g.id}: member ${f.uuid} is not a uuid`);
    return { fileUuid, effects: f.default_effects ?? '' };
  });
  return { id: g.id, uuid, createdUs: requiredTime(g.datetime_created, 'datetime_created'), members };
}

/**
 * File tag rules (wire-reference §2.13; the JS rest-client documents that tags are lowercased and
 * whitespace-stripped by the server): 1..64 characters after that, no comma (the Upload API's
 * `tags` field is a comma-separated list) and no control characters; at most 50 per file. Stored in
 * the order first given, without duplicates.
 */
import { tagErrors } from './error-catalogue/fields.js';

export const TAGS_MAX = 50;
export const TAG_MAX_LENGTH = 64;
// eslint-disable-next-line no-control-regex
const FORBIDDEN = /[\u0000-\u001f\u007f,]/;

export function normalizeTag(raw: unknown): string {
  if (typeof raw !== 'string') throw tagErrors.notString();
  const tag = raw.trim().toLowerCase();
  if (tag.length === 0) throw tagErrors.empty();
  if ([...tag].length > TAG_MAX_LENGTH) throw tagErrors.tooLong(tag, TAG_MAX_LENGTH);
  if (FORBIDDEN.test(tag)) throw tagErrors.forbidden(tag);
  return tag;
}

/** A list of tags (JSON array), normalized, duplicates dropped; `field` names it in errors. */
export function normalizeTags(raw: unknown, field = 'tags'): string[] {
  if (!Array.isArray(raw)) throw tagErrors.notList(field);
  const out: string[] = [];
  for (const item of raw) {
    const tag = normalizeTag(item);
    if (!out.includes(tag)) out.push(tag);
  }
  return out;
}

/** The Upload API's `tags=a,b` field (empty items ignored). */
export function parseTagList(text: string | undefined): string[] {
  if (text === undefined) return [];
  return checkTagCount(normalizeTags(text.split(',').filter((t) => t.trim() !== '')));
}

export function checkTagCount(tags: string[]): string[] {
  if (tags.length > TAGS_MAX) throw tagErrors.tooMany(TAGS_MAX);
  return tags;
}

/** What a change did: the resulting list, and what was added and deleted (each sorted). */
export interface TagChange {
  tags: string[];
  added: string[];
  deleted: string[];
}

export function diffTags(before: string[], after: string[]): TagChange {
  return {
    tags: after,
    added: after.filter((t) => !before.includes(t)).sort(),
    deleted: before.filter((t) => !after.includes(t)).sort(),
  };
}

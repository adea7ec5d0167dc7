/**
 * Validation of webhook subscription input (form-urlencoded or JSON). Field problems answer in
 * DRF style, `{"field": ["message"]}`, all fields at once; a missing required field answers the
 * documented `` `target_url` is missing.`` detail (wire-reference §2.2, §2.10).
 */
import { parseBoolean, REST_API_BOOLEANS } from '../core/booleans.js';
import { FILE_EVENTS } from '../jobs/file-events.js';
import type { SubscriptionPatch } from './repo.js';

export const PAYLOAD_VERSIONS = ['0.7'] as const;
const MAX_TARGET_URL = 255;
const MAX_SECRET = 32;

export type Parsed<T> = { ok: true; value: T } | { ok: false; body: Record<string, unknown> };

/** C0 controls and DEL: PostgreSQL text refuses NUL outright, and none belongs in a URL or a secret. */
const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;

/** Create: target_url and event required; is_active defaults to true, version to 0.7. */
export function parseCreate(input: Record<string, unknown>): Parsed<Required<Pick<SubscriptionPatch, 'targetUrl' | 'event' | 'isActive' | 'version'>> & { signingSecret: string | null }> {
  for (const name of ['target_url', 'event'] as const) {
    if (absent(input[name])) return { ok: false, body: { detail: `\`${name}\` is missing.` } };
  }
  const parsed = parseFields(input);
  if (!parsed.ok) return parsed;
  const v = parsed.value;
  return { ok: true, value: { targetUrl: v.targetUrl!, event: v.event!, isActive: v.isActive ?? true, version: v.version ?? '0.7', signingSecret: v.signingSecret ?? null } };
}

/** Update: every field optional; omitted fields stay unchanged. */
export function parseUpdate(input: Record<string, unknown>): Parsed<SubscriptionPatch> {
  return parseFields(input);
}

/** Unsubscribe: target_url required; without event every subscription of the target goes. */
export function parseUnsubscribe(input: Record<string, unknown>): Parsed<{ targetUrl: string; event: string | undefined }> {
  if (absent(input['target_url'])) return { ok: false, body: { detail: '`target_url` is missing.' } };
  const parsed = parseFields({ target_url: input['target_url'], ...(absent(input['event']) ? {} : { event: input['event'] }) });
  if (!parsed.ok) return parsed;
  return { ok: true, value: { targetUrl: parsed.value.targetUrl!, event: parsed.value.event } };
}

function parseFields(input: Record<string, unknown>): Parsed<SubscriptionPatch> {
  const errors: Record<string, string[]> = {};
  const out: SubscriptionPatch = {};
  const raw = (k: string) => input[k];

  if (raw('target_url') !== undefined) {
    const r = targetUrl(raw('target_url'));
    if (typeof r === 'string') out.targetUrl = r;
    else errors['target_url'] = r;
  }
  if (raw('event') !== undefined) {
    const e = raw('event');
    if (typeof e === 'string' && (FILE_EVENTS as readonly string[]).includes(e)) out.event = e;
    else errors['event'] = [`"${String(e)}" is not a valid choice.`];
  }
  if (raw('is_active') !== undefined) {
    const b = parseBoolean(raw('is_active'), REST_API_BOOLEANS);
    if (b === undefined) errors['is_active'] = ['Must be a valid boolean.'];
    else out.isActive = b;
  }
  if (raw('signing_secret') !== undefined) {
    const s = raw('signing_secret');
    if (s === null || s === '') out.signingSecret = null;
    else if (typeof s !== 'string') errors['signing_secret'] = ['Not a valid string.'];
    else if (s.length > MAX_SECRET) errors['signing_secret'] = [`Ensure this field has no more than ${MAX_SECRET} characters.`];
    else if (CONTROL_CHARS.test(s)) errors['signing_secret'] = ['Control characters are not allowed.'];
    else out.signingSecret = s;
  }
  if (raw('version') !== undefined && raw('version') !== '') {
    const v = typeof raw('version') === 'number' ? String(raw('version')) : raw('version');
    if (typeof v === 'string' && (PAYLOAD_VERSIONS as readonly string[]).includes(v)) out.version = v;
    else errors['version'] = [`"${String(raw('version'))}" is not a valid choice.`];
  }
  return Object.keys(errors).length > 0 ? { ok: false, body: errors } : { ok: true, value: out };
}

function absent(v: unknown): boolean {
  return v === undefined || v === null || v === '';
}

function targetUrl(v: unknown): string | string[] {
  if (typeof v !== 'string' || v.trim() === '') return ['This field may not be blank.'];
  if (v.length > MAX_TARGET_URL) return [`Ensure this field has no more than ${MAX_TARGET_URL} characters.`];
  // The URL parser would percent-encode or drop them; a URL that names them is not what was meant.
  if (CONTROL_CHARS.test(v)) return ['Enter a valid URL.'];
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    return ['Enter a valid URL.'];
  }
  if ((u.protocol !== 'http:' && u.protocol !== 'https:') || !u.hostname || /\s/.test(v)) return ['Enter a valid URL.'];
  return v;
}

/**
 * The webhook subscription bodies (form-urlencoded or JSON) as route schemas: the same objects
 * document the fields in /openapi.json and validate them. Field problems answer in DRF style,
 * `{"field": ["message"]}`, all fields at once (the seam's `invalid`, below); a missing required
 * field answers the documented `` `target_url` is missing.`` detail instead (wire-reference §2.2, §2.10).
 */
import { z } from 'zod';
import { parseBoolean, REST_API_BOOLEANS } from '../core/booleans.js';
import { AppError } from '../core/errors.js';
import { parsedField, type InputIssue } from '../http/common/route.js';
import { drfFieldErrors } from '../http/rest/route.js';
import { FILE_EVENTS } from '../jobs/file-events.js';
import type { SubscriptionPatch } from './repo.js';
import { restErrors } from '../core/error-catalogue/rest.js';
import { restFieldErrors } from '../core/error-catalogue/rest-fields.js';

export const PAYLOAD_VERSIONS = ['0.7'] as const;
const MAX_TARGET_URL = 255;
const MAX_SECRET = 32;
/** The code of a missing required field's issue: it answers `{"detail": …}`, not field errors. */
const MISSING = 'MissingField';

/** C0 controls and DEL: PostgreSQL text refuses NUL outright, and none belongs in a URL or a secret. */
const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;

function absent(v: unknown): boolean {
  return v === undefined || v === null || v === '';
}

function targetUrl(v: unknown): string {
  if (typeof v !== 'string' || v.trim() === '') throw restFieldErrors.blank();
  if (v.length > MAX_TARGET_URL) throw restFieldErrors.tooLong(MAX_TARGET_URL);
  // The URL parser would percent-encode or drop them; a URL that names them is not what was meant.
  if (CONTROL_CHARS.test(v)) throw restFieldErrors.urlInvalid();
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw restFieldErrors.urlInvalid();
  }
  if ((u.protocol !== 'http:' && u.protocol !== 'https:') || !u.hostname || /\s/.test(v)) throw restFieldErrors.urlInvalid();
  return v;
}

function event(e: unknown): string {
  if (typeof e === 'string' && (FILE_EVENTS as readonly string[]).includes(e)) return e;
  throw restFieldErrors.notAChoice(e);
}

function isActive(v: unknown): boolean {
  const b = parseBoolean(v, REST_API_BOOLEANS);
  if (b === undefined) throw restFieldErrors.notBoolean();
  return b;
}

function signingSecret(s: unknown): string | null {
  if (s === null || s === '') return null;
  if (typeof s !== 'string') throw restFieldErrors.notString();
  if (s.length > MAX_SECRET) throw restFieldErrors.tooLong(MAX_SECRET);
  if (CONTROL_CHARS.test(s)) throw restFieldErrors.controlCharacters();
  return s;
}

/** An empty version is no version (the default stays). */
function version(raw: unknown): string | undefined {
  if (raw === '') return undefined;
  const v = typeof raw === 'number' ? String(raw) : raw;
  if (typeof v === 'string' && (PAYLOAD_VERSIONS as readonly string[]).includes(v)) return v;
  throw restFieldErrors.notAChoice(raw);
}

const docs = {
  target_url: { type: 'string', format: 'uri', maxLength: MAX_TARGET_URL, description: 'The http(s) URL events are POSTed to.' },
  event: { type: 'string', enum: [...FILE_EVENTS], description: 'The event subscribed to.' },
  is_active: { type: 'boolean', description: 'Deliveries on or off (default true; forms: `true`/`false`).' },
  signing_secret: { type: ['string', 'null'], maxLength: MAX_SECRET, description: 'Key of the `X-Uc-Signature` HMAC (empty or null: none).' },
  version: { type: 'string', enum: [...PAYLOAD_VERSIONS], description: 'Payload version.' },
};

/** An optional field: absent stays absent; anything else goes through `parse`. */
const optional = <T>(name: keyof typeof docs, parse: (v: unknown) => T) => parsedField(docs[name], parse).optional();

/** A required field: absent, null or empty answers `` `name` is missing.``. */
const required = <T>(name: keyof typeof docs, parse: (v: unknown) => T) =>
  parsedField(docs[name], (v) => {
    if (absent(v)) throw restErrors.missingField(name);
    return parse(v);
  });

const patchOf = (v: { target_url?: string; event?: string; is_active?: boolean; signing_secret?: string | null; version?: string }): SubscriptionPatch => ({
  ...(v.target_url !== undefined ? { targetUrl: v.target_url } : {}),
  ...(v.event !== undefined ? { event: v.event } : {}),
  ...(v.is_active !== undefined ? { isActive: v.is_active } : {}),
  ...(v.signing_secret !== undefined ? { signingSecret: v.signing_secret } : {}),
  ...(v.version !== undefined ? { version: v.version } : {}),
});

/** Create: target_url and event required; is_active defaults to true, version to 0.7. */
export const createBody = z
  .object({
    target_url: required('target_url', targetUrl),
    event: required('event', event),
    is_active: optional('is_active', isActive),
    signing_secret: optional('signing_secret', signingSecret),
    version: optional('version', version),
  })
  .transform((v) => ({ targetUrl: v.target_url, event: v.event, isActive: v.is_active ?? true, version: v.version ?? '0.7', signingSecret: v.signing_secret ?? null }));

/** Update: every field optional; omitted fields stay unchanged. */
export const updateBody = z
  .object({
    target_url: optional('target_url', targetUrl),
    event: optional('event', event),
    is_active: optional('is_active', isActive),
    signing_secret: optional('signing_secret', signingSecret),
    version: optional('version', version),
  })
  .transform(patchOf);

/** Unsubscribe: target_url required; without event (or with an empty one) every subscription of the target goes. */
export const unsubscribeBody = z
  .object({
    target_url: required('target_url', targetUrl),
    event: optional('event', (v) => (absent(v) ? undefined : event(v))),
  })
  .transform((v) => ({ targetUrl: v.target_url, event: v.event }));

/** A missing required field answers its `{"detail": …}` alone; otherwise every bad field at once. */
export function subscriptionInvalid(issues: readonly InputIssue[]): AppError {
  const missing = issues.find((i) => i.code === MISSING);
  if (missing) return restErrors.fieldErrors({ detail: missing.message });
  return drfFieldErrors(issues.filter((i) => i.code !== MISSING));
}

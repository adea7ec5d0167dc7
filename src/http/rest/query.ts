/** Strict parsing of REST query parameters: a bad value is a 400 naming the parameter. */
import { parseBoolean, REST_API_BOOLEANS } from '../../core/booleans.js';
import { parseDateToUs } from '../../core/time.js';
import { z } from 'zod';
import { checked } from '../common/route.js';
import { restFieldErrors } from '../../core/error-catalogue/rest-fields.js';

export type Query = Record<string, string | undefined>;

export function queryOf(raw: unknown): Query {
  const out: Query = {};
  for (const [k, v] of Object.entries((raw ?? {}) as Record<string, unknown>)) out[k] = Array.isArray(v) ? String(v[v.length - 1]) : v === undefined ? undefined : String(v);
  return out;
}

export function boolParam(q: Query, name: string): boolean | null {
  const v = q[name];
  if (v === undefined || v === '') return null;
  const b = parseBoolean(v, REST_API_BOOLEANS);
  if (b !== undefined) return b;
  throw restFieldErrors.notTrueOrFalse(name);
}

export function limitParam(q: Query, def = 100, max = 1000): number {
  const v = q['limit'];
  if (v === undefined || v === '') return def;
  if (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > max) throw restFieldErrors.limitOutOfRange(max);
  return Number(v);
}

export function orderingParam(q: Query, field: string): boolean {
  const v = q['ordering'];
  if (v === undefined || v === '' || v === field) return false;
  if (v === `-${field}`) return true;
  throw restFieldErrors.orderingNotField(field);
}

export function dateParam(q: Query, name: string): number | null {
  const v = q[name];
  if (v === undefined || v === '') return null;
  const us = parseDateToUs(v);
  if (us === null) throw restFieldErrors.notDateTime(name);
  return us;
}

export function offsetParam(q: Query): number {
  const v = q['offset'];
  if (v === undefined || v === '') return 0;
  if (!/^\d+$/.test(v)) throw restFieldErrors.offsetNegative();
  return Number(v);
}

/** A comma-separated list of extra parts: `include` (v0.7) or `add_fields` (v0.6). */
export function includeParam(q: Query, allowed: string[], name = 'include'): Set<string> {
  const v = q[name];
  const items = new Set((v ?? '').split(',').map((s) => s.trim()).filter(Boolean));
  for (const item of items) if (!allowed.includes(item)) throw restFieldErrors.includeNotAllowed(name, allowed);
  return items;
}

/*
 * The same parameters as zod schemas for described routes (src/http/rest/route.ts): each runs the
 * parser above, so the 400 and its message stay exactly the same, and documents the parameter.
 */
const text = () => z.string().optional();

export const queryParam = {
  bool: (name: string, description: string) => checked(text(), (v) => boolParam({ [name]: v }, name)).meta({ description: `${description} (true or false)` }),
  limit: (def = 100, max = 1000) => checked(text(), (v) => limitParam({ limit: v }, def, max)).meta({ description: `Page size, 1 to ${max} (default ${def}).` }),
  ordering: (field: string) => checked(text(), (v) => orderingParam({ ordering: v }, field)).meta({ description: `\`${field}\` (oldest first, the default) or \`-${field}\`.` }),
  date: (name: string, description: string) => checked(text(), (v) => dateParam({ [name]: v }, name)).meta({ description: `${description} (ISO 8601 date-time).` }),
  offset: () => checked(text(), (v) => offsetParam({ offset: v })).meta({ description: 'Ignored by cursor pages (the links carry `offset=0`); must be a non-negative integer.' }),
  include: (allowed: string[]) => checked(text(), (v) => includeParam({ include: v }, allowed)).meta({ description: `Comma-separated extras: ${allowed.join(', ')}.` }),
};

/**
 * How each interface spells a boolean, and the one parser that reads them. The spellings are
 * the clients' own: the Upload API takes what the SDKs and the widget send, the REST API what the
 * SDKs send in query strings and in JSON or form bodies, the operator's config and CLI the usual
 * on/off words.
 */

export interface BooleanSpellings {
  true: readonly string[];
  false: readonly string[];
  /** Compare case-insensitively. */
  anyCase: boolean;
  /** Also accept JSON `true`/`false` and the numbers 1/0 (JSON bodies). */
  jsonValues: boolean;
}

export const UPLOAD_API_BOOLEANS: BooleanSpellings = { true: ['1', 'true', 'True'], false: ['0', 'false', 'False'], anyCase: false, jsonValues: false };

export const REST_API_BOOLEANS: BooleanSpellings = { true: ['1', 'true'], false: ['0', 'false'], anyCase: true, jsonValues: true };

export const OPERATOR_BOOLEANS: BooleanSpellings = { true: ['1', 'true', 'yes', 'on'], false: ['0', 'false', 'no', 'off'], anyCase: true, jsonValues: true };

/** The boolean `value` spells, or undefined when it is not one of the accepted spellings. */
export function parseBoolean(value: unknown, spellings: BooleanSpellings): boolean | undefined {
  if (spellings.jsonValues) {
    if (typeof value === 'boolean') return value;
    if (value === 1 || value === 0) return value === 1;
  }
  if (typeof value !== 'string') return undefined;
  const text = spellings.anyCase ? value.toLowerCase() : value;
  if (spellings.true.includes(text)) return true;
  if (spellings.false.includes(text)) return false;
  return undefined;
}

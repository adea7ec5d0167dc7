/**
 * Hostile request bodies for the REST and Upload API fuzzers: valid templates with one value made
 * wrong (type, size, control characters), and JSON or form text that is broken as a whole.
 */
import type { Random } from './random.js';

/** Strings that must be refused or stored as they are, never crash a handler or a database. */
export const HOSTILE_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\u0001\u0002\u0003\u001f',
  '\u007f',
  '\r\n',
  '\ud800',
  '\udfff\ud800',
  '\uffff',
  '\u202e',
  '💩',
  '%00',
  '../../etc/passwd',
  'x'.repeat(256),
  'x'.repeat(70_000),
  '<script>alert(1)</script>',
  "'; DROP TABLE files; --",
  '__proto__',
  'constructor',
  'http://127.0.0.1:1/',
  'http://[::1]/',
  'javascript:alert(1)',
  `http://example.com/${'a'.repeat(300)}`,
];

export const HOSTILE_VALUES: unknown[] = [
  null,
  true,
  false,
  0,
  -0,
  -1,
  1.5,
  1e308,
  -1e308,
  2 ** 53 + 1,
  2 ** 64,
  [],
  [null],
  {},
  { __proto__: { polluted: true } },
  [[[[[[[[[[]]]]]]]]]],
  ...HOSTILE_STRINGS,
];

/** JSON text that is broken, odd or heavy as a whole. */
export function brokenJson(rnd: Random, valid: string): string {
  const kinds: Array<() => string> = [
    () => valid.slice(0, rnd.int(0, Math.max(0, valid.length - 1))),
    () => `${valid},`,
    () => valid.replace(/"/g, "'"),
    () => `\ufeff${valid}`,
    () => `${valid}${valid}`,
    () => '[' .repeat(rnd.pick([100, 5000, 100_000])) + ']'.repeat(rnd.pick([0, 100, 5000])),
    () => '{"a":'.repeat(rnd.pick([100, 5000])) + '1' + '}'.repeat(rnd.pick([0, 100, 5000])),
    () => '{"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":1}}}',
    () => 'NaN',
    () => 'Infinity',
    () => '1e99999',
    () => '-',
    () => '"\\ud800"',
    () => '"\\u0000"',
    () => '/* comment */ {}',
    () => '{"a":1,"a":2}',
    () => `{"k":"${'\\u0000'.repeat(100)}"}`,
    () => `[${'1,'.repeat(100_000)}1]`,
    () => 'null',
    () => 'true',
    () => '',
    () => rnd.bytes(rnd.int(1, 200)).toString('latin1'),
  ];
  return rnd.pick(kinds)();
}

/** A JSON object template with one field replaced by a hostile value (or added, or removed). */
export function mutateObject(rnd: Random, template: Record<string, unknown>): unknown {
  const out: Record<string, unknown> = { ...template };
  const keys = Object.keys(out);
  const r = rnd.next();
  if (r < 0.7 && keys.length > 0) out[rnd.pick(keys)] = rnd.pick(HOSTILE_VALUES);
  else if (r < 0.8 && keys.length > 0) delete out[rnd.pick(keys)];
  else out[rnd.pick(HOSTILE_STRINGS).slice(0, 100)] = rnd.pick(HOSTILE_VALUES);
  if (rnd.chance(0.1)) return rnd.pick(HOSTILE_VALUES);
  return out;
}

/** The same object as form-urlencoded text, with some hostile encodings of its own. */
export function formText(rnd: Random, fields: Record<string, unknown>): string {
  const parts = Object.entries(fields).map(([k, v]) => `${pct(k)}=${pct(typeof v === 'string' ? v : JSON.stringify(v) ?? '')}`);
  const r = rnd.next();
  if (r < 0.1) parts.push('%00=%00');
  else if (r < 0.2) parts.push('a[b][c][d]=1', 'a=2');
  else if (r < 0.25) parts.push(...Array.from({ length: 5000 }, (_, i) => `k${i}=${i}`));
  else if (r < 0.3) parts.push('%ZZ=%G0', '=', '&&&');
  return parts.join('&');
}

/** encodeURIComponent that also takes lone surrogates (as U+FFFD, like any UTF-8 encoder). */
export function pct(text: string): string {
  return [...Buffer.from(text, 'utf8')].map((b) => (/[A-Za-z0-9\-_.~]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`)).join('');
}

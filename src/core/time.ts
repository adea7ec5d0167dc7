/** Times are integer microseconds since the epoch inside Stowage; these convert at the edges. */

let lastIssuedUs = 0;

/** Current time in microseconds, strictly increasing within this process. */
export function nowUs(): number {
  const t = Date.now() * 1000;
  lastIssuedUs = t > lastIssuedUs ? t : lastIssuedUs + 1;
  return lastIssuedUs;
}

/** `2021-10-19T08:36:22.326641Z`: the wire format of every timestamp (microseconds, Z). */
export function formatUs(us: number): string {
  const ms = Math.floor(us / 1000);
  const micro = String(us % 1_000_000).padStart(6, '0');
  return new Date(ms).toISOString().slice(0, 19) + `.${micro}Z`;
}

export function formatUsOrNull(us: number | null): string | null {
  return us === null ? null : formatUs(us);
}

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?(Z|[+-]\d{2}:?\d{2})?$/;

/**
 * Parses the date forms clients send for `from`/`to`: `2024-01-01T00:00:00Z`,
 * `2024-01-01T00:00:00.000Z`, `2021-10-12T06:55:15.392977+00:00`, and zone-less (taken as UTC).
 * Returns null when the text is not such a date.
 */
export function parseDateToUs(text: string): number | null {
  const m = ISO.exec(text.trim());
  if (!m) return null;
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '', zone = 'Z'] = m;
  const base = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
  if (Number.isNaN(base)) return null;
  const check = new Date(base);
  if (check.getUTCDate() !== Number(d) || check.getUTCMonth() !== Number(mo) - 1) return null;
  let offsetMin = 0;
  if (zone !== 'Z') {
    const sign = zone.startsWith('-') ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    offsetMin = sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2)));
  }
  const micro = Number((frac + '000000').slice(0, 6));
  return (base - offsetMin * 60_000) * 1000 + micro;
}

/** The cursor form used in next/previous links: `2021-10-12T06:55:15.392977+00:00`. */
export function formatCursor(us: number): string {
  return formatUs(us).replace(/Z$/, '+00:00');
}

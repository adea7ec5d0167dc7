/**
 * A request's query parameters, read as URLSearchParams reads them (`+` is a space, percent
 * escapes decoded, a malformed escape kept as written), but parsed only when first asked and into
 * a plain map: most requests ask for a few names, and a URLSearchParams per request was a visible
 * share of a small GetObject's CPU. A query is immutable once read, so the requests repeating a
 * URL share one instance (request.ts).
 */
export class S3Query {
  /** Each name's first value, in the order the names first appear. */
  private parsed: Map<string, string> | null = null;
  private prefixes: Map<string, boolean> | undefined;

  constructor(readonly raw: string) {}

  get(name: string): string | null {
    return this.params().get(name) ?? null;
  }

  has(name: string): boolean {
    return this.params().has(name);
  }

  keys(): IterableIterator<string> {
    return this.params().keys();
  }

  /** Whether a name starts with `prefix` (remembered: the query may serve many requests). */
  hasNameStarting(prefix: string): boolean {
    let known = this.prefixes?.get(prefix);
    if (known === undefined) {
      known = false;
      for (const name of this.params().keys()) if (name.startsWith(prefix)) known = true;
      this.prefixes ??= new Map();
      this.prefixes.set(prefix, known);
    }
    return known;
  }

  private params(): Map<string, string> {
    if (this.parsed !== null) return this.parsed;
    const params = new Map<string, string>();
    if (this.raw !== '') {
      for (const item of this.raw.split('&')) {
        if (item === '') continue;
        const eq = item.indexOf('=');
        const name = decodeForm(eq === -1 ? item : item.slice(0, eq));
        if (!params.has(name)) params.set(name, eq === -1 ? '' : decodeForm(item.slice(eq + 1)));
      }
    }
    this.parsed = params;
    return params;
  }
}

/** One name or value as `application/x-www-form-urlencoded` decodes it. */
function decodeForm(text: string): string {
  if (!text.includes('%') && !text.includes('+')) return text;
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    // A malformed escape or invalid UTF-8: URLSearchParams keeps the first and replaces the second.
    return new URLSearchParams(`v=${text}`).get('v') ?? '';
  }
}

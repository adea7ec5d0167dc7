/**
 * Syntax checks of an outbound URL, in the order the wire error codes imply: parse -> scheme ->
 * host. Pure (no DNS); the address checks live in outbound.ts.
 *
 * WHATWG URL parsing is lenient (`http:///x` becomes host `x`, `http:example.com` gets a host), so
 * the authority is also read from the raw text: a URL only has a host when it says `scheme://host`.
 */
import { urlErrors } from '../core/error-catalogue/download.js';

const SCHEME = /^([a-z][a-z0-9+.-]*):/i;
const AUTHORITY = /^[a-z][a-z0-9+.-]*:\/\/([^/\\?#]*)/i;
/** DNS labels; underscores are tolerated because real hosts use them. */
const LABEL = /^(?!-)[a-z0-9_-]{1,63}(?<!-)$/;

/** Host part of a raw authority: drops `user:pass@` and `:port`, keeps `[v6]` brackets. */
function rawHost(authority: string): string {
  const hostPort = authority.slice(authority.lastIndexOf('@') + 1);
  return hostPort.startsWith('[') ? hostPort.replace(/\].*$/, ']') : hostPort.replace(/:.*$/, '');
}

function validHostname(host: string): boolean {
  if (host.startsWith('[')) return true; // IPv6 literal, already validated by the URL parser
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  return name.length > 0 && name.length <= 253 && name.split('.').every((l) => LABEL.test(l));
}

/** Returns the parsed URL or throws the matching URL* AppError (400). */
export function parseOutboundUrl(input: string): URL {
  const text = input.trim();
  const scheme = SCHEME.exec(text)?.[1];
  if (!scheme) throw text ? urlErrors.schemeRequired() : urlErrors.parsingFailed();
  if (!/^https?$/i.test(scheme)) throw urlErrors.schemeInvalid();
  const authority = AUTHORITY.exec(text)?.[1];
  if (authority === undefined || rawHost(authority) === '') throw urlErrors.hostRequired();

  let url: URL;
  try {
    url = new URL(text);
  } catch {
    // Tell a bad host from a bad rest of the URL: retry with a known-good host in its place.
    const withGoodHost = text.replace(AUTHORITY, `${scheme}://example.com`);
    throw URL.canParse(withGoodHost) ? urlErrors.hostMalformed() : urlErrors.parsingFailed();
  }
  if (!validHostname(url.hostname)) throw urlErrors.hostMalformed();
  return url;
}

/** `[::1]` -> `::1`; other hosts unchanged. */
export const unbracket = (hostname: string): string => hostname.replace(/^\[(.*)\]$/, '$1');

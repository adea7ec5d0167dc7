/**
 * Signatures already verified, so that a request repeated byte for byte (a presigned URL fetched
 * again and again, a client retrying) costs no hashing and no HMAC. A hit needs the exact signed
 * material (the URL, with its signature when presigned; the method, the signed headers' values
 * and the Authorization header's fields: `rest`) checked against the very secrets list it was
 * verified with: the project cache (projects/service.ts) hands out a new list whenever it reads
 * the keys again, so a revoked or added secret takes effect as it would without this cache. The
 * time checks (a presigned URL's expiry, a header signature's clock skew) run on every request
 * before this is consulted.
 *
 * Entries hang on the URL's shared parse (request.ts), one instance per distinct URL while it is
 * kept: a lookup is by identity, with no hashing of a long URL, and the entries go with the parses.
 */
interface Entry<T> {
  method: string;
  values: readonly string[];
  auth: string;
  secrets: readonly string[];
  signing: T;
}

/** What a request's signature covers beyond its URL, compared field by field (no string built to compare). */
export interface SignedRest {
  method: string;
  /** The signed headers' values, in the order the signature lists them. */
  values: readonly string[];
  /** A header signature's own fields (signed header names, payload hash, date, scope, signature); empty when presigned (the URL holds them). */
  auth: string;
}

/** `T`: what a check answers (sigv4.ts's signing context), kept for the requests it verified. */
export class VerifiedRequests<T> {
  private readonly seen = new WeakMap<object, Entry<T>>();

  /** What the check answered for `url` (its parse) and `rest` against this very `secrets` list; undefined when it was not made. */
  get(url: object, rest: SignedRest, secrets: readonly string[]): T | undefined {
    const hit = this.seen.get(url);
    if (hit === undefined || hit.secrets !== secrets || hit.method !== rest.method || hit.auth !== rest.auth) return undefined;
    const values = rest.values;
    if (hit.values.length !== values.length) return undefined;
    for (let i = 0; i < values.length; i++) if (hit.values[i] !== values[i]) return undefined;
    return hit.signing;
  }

  /** One entry per URL: the one verified last (another `rest` for the same URL replaces it). */
  add(url: object, rest: SignedRest, secrets: readonly string[], signing: T): void {
    this.seen.set(url, { method: rest.method, values: rest.values, auth: rest.auth, secrets, signing });
  }
}

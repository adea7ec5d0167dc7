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
  rest: string;
  secrets: readonly string[];
  signing: T;
}

/** `T`: what a check answers (sigv4.ts's signing context), kept for the requests it verified. */
export class VerifiedRequests<T> {
  private readonly seen = new WeakMap<object, Entry<T>>();

  /** What the check answered for `url` (its parse) and `rest` against this very `secrets` list; undefined when it was not made. */
  get(url: object, rest: string, secrets: readonly string[]): T | undefined {
    const hit = this.seen.get(url);
    return hit !== undefined && hit.rest === rest && hit.secrets === secrets ? hit.signing : undefined;
  }

  /** One entry per URL: the one verified last (another `rest` for the same URL replaces it). */
  add(url: object, rest: string, secrets: readonly string[], signing: T): void {
    this.seen.set(url, { rest, secrets, signing });
  }
}

/**
 * Signatures already verified, so that a request repeated byte for byte (a presigned URL fetched
 * again and again, a client retrying) costs no hashing and no HMAC. A hit needs the exact signed
 * material (method, the whole URL with its signature, the signed headers' values, the
 * Authorization header's fields) checked against the very secrets list it was verified with: the
 * project cache (projects/service.ts) hands out a new list whenever it reads the keys again, so a
 * revoked or added secret takes effect as it would without this cache. The time checks (a
 * presigned URL's expiry, a header signature's clock skew) run on every request before this is
 * consulted.
 */
interface Entry<T> {
  secrets: readonly string[];
  signing: T;
}

/** `T`: what a check answers (sigv4.ts's signing context), kept for the requests it verified. */
export class VerifiedRequests<T> {
  private readonly seen = new Map<string, Entry<T>>();

  constructor(private readonly max = 10_000) {}

  /** What the check answered for `material` against this very `secrets` list; undefined when it was not made. */
  get(material: string, secrets: readonly string[]): T | undefined {
    const hit = this.seen.get(material);
    return hit !== undefined && hit.secrets === secrets ? hit.signing : undefined;
  }

  add(material: string, secrets: readonly string[], signing: T): void {
    // Bounded by clearing: entries are cheap to rebuild and a full map means a flood of distinct requests.
    if (this.seen.size >= this.max) this.seen.clear();
    this.seen.set(material, { secrets, signing });
  }
}

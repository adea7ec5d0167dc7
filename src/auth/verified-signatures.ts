/**
 * Signatures already verified, so a client repeating a request (same method, URI, body, type and
 * date: SDKs sign once per second or per request) costs no HMAC per secret and no hashing. A hit
 * needs the exact credential over the exact message, checked against the very secrets list it was
 * verified with: the project cache (projects/service.ts) hands out a new list whenever it reads
 * keys again, so a revoked or added secret takes effect as it would without this cache. The date
 * window is still checked on every request before this is consulted.
 */
export class VerifiedSignatures {
  private readonly seen = new Map<string, readonly string[]>();

  constructor(private readonly max = 10_000) {}

  has(key: string, secrets: readonly string[]): boolean {
    return this.seen.get(key) === secrets;
  }

  add(key: string, secrets: readonly string[]): void {
    // Bounded by clearing: entries are cheap to rebuild and a full map means a flood of distinct requests.
    if (this.seen.size >= this.max) this.seen.clear();
    this.seen.set(key, secrets);
  }
}

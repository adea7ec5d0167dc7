/**
 * /base/ streams file parts to storage as they arrive, and a multipart body may carry the public
 * key after the file. Bytes staged before any known key arrived are written for an anonymous
 * client: this budget bounds them per client address and over all requests, so strangers cannot
 * fill the disk (or the bucket) with uploads that will only ever get a 403.
 */
import { Transform } from 'node:stream';

export class AnonymousStagingBudget {
  private total = 0;
  private readonly byClient = new Map<string, number>();

  constructor(
    private readonly perClientBytes: number,
    private readonly totalBytes: number,
  ) {}

  /** One request's share; release it when the request ends or a known key arrives. */
  open(client: string): AnonymousStaging {
    return new AnonymousStaging(this, client);
  }

  /** Reserves `n` bytes for `client`, or refuses without reserving anything. */
  reserve(client: string, n: number): boolean {
    const mine = this.byClient.get(client) ?? 0;
    if (mine + n > this.perClientBytes || this.total + n > this.totalBytes) return false;
    this.byClient.set(client, mine + n);
    this.total += n;
    return true;
  }

  giveBack(client: string, n: number): void {
    if (n === 0) return;
    const left = (this.byClient.get(client) ?? 0) - n;
    if (left > 0) this.byClient.set(client, left);
    else this.byClient.delete(client);
    this.total -= n;
  }
}

export class AnonymousStaging {
  private held = 0;
  private released = false;

  constructor(
    private readonly budget: AnonymousStagingBudget,
    private readonly client: string,
  ) {}

  /**
   * Passes a file part's bytes through, reserving each chunk before it is written; fails with
   * `refuse()` on the first chunk over the budget. After release() it reserves nothing.
   */
  meter(refuse: () => Error): Transform {
    return new Transform({
      transform: (chunk: Buffer, _enc, done) => {
        if (this.released) return done(null, chunk);
        if (!this.budget.reserve(this.client, chunk.length)) return done(refuse());
        this.held += chunk.length;
        done(null, chunk);
      },
    });
  }

  /** Whether release() was called: a part staged from now on needs no meter (it would reserve nothing). */
  get isReleased(): boolean {
    return this.released;
  }

  /** The request is no longer anonymous (or is over): its bytes stop counting. Idempotent. */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.budget.giveBack(this.client, this.held);
    this.held = 0;
  }
}

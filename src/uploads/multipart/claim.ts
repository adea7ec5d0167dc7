/**
 * One completion of a multipart upload at a time, across nodes, without blocking an upload whose
 * completing node died: the claim is a lease on the `multipart_uploads` row.
 *
 * Taking it flips the row to `completing` and stamps `claimed_us`. That stamp is the holder's id
 * (a fencing token): the holder renews it every third of the lease (heartbeat) by compare-and-swap
 * on its own last stamp, and releases the row the same way, so a holder that lost its claim can
 * neither renew nor release it. A claim not renewed for a whole lease belongs to a dead completion
 * and the next request takes it over; while it is alive, other requests are told to retry later.
 */
import { nowUs } from '../../core/time.js';
import type { MultipartRepo } from './repo.js';
import { uploadErrors } from '../../core/error-catalogue/upload.js';

export const alreadyUploaded = uploadErrors.multipartAlreadyUploaded;

/** Another completion of the same upload is running: retryable, with a hint of when. */
export const completionInProgress = uploadErrors.multipartCompletionInProgress;

export class CompletionClaim {
  private token: number;
  private lost = false;
  private timer: NodeJS.Timeout | null = null;
  /** Renewals and the release run one after another: each needs the stamp the previous one left. */
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly repo: MultipartRepo,
    private readonly uuid: string,
    token: number,
    /** True when a dead completion's claim was taken over (it may have left its work half done). */
    readonly tookOver: boolean,
  ) {
    this.token = token;
  }

  /**
   * Takes the upload for one completion, or throws: 400 already uploaded, 503 in progress (with
   * the time left on the live claim), or `missing()` when the row is gone.
   */
  static async take(repo: MultipartRepo, uuid: string, leaseMs: number, missing: () => Error): Promise<CompletionClaim> {
    const now = nowUs();
    const stale = now - leaseMs * 1000;
    const row = await repo.claimState(uuid);
    if (!row) throw missing();
    if (row.state === 'done') throw alreadyUploaded();
    const tookOver = row.state === 'completing';
    if (await repo.claim(uuid, now, stale)) return new CompletionClaim(repo, uuid, now, tookOver);
    // Lost the race, or the claim is alive: say which, from a fresh read.
    const after = await repo.claimState(uuid);
    if (!after) throw missing();
    if (after.state === 'done') throw alreadyUploaded();
    const leftMs = Number(after.claimed_us ?? now) / 1000 + leaseMs - now / 1000;
    throw completionInProgress(Math.ceil(leftMs / 1000));
  }

  /** Renews the lease every third of it until `stop()`. */
  startHeartbeat(leaseMs: number): void {
    this.timer = setInterval(() => void this.serial(() => this.renew()).catch(() => undefined), Math.max(100, Math.floor(leaseMs / 3)));
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Renews once more and throws (503) when another completion has taken the upload over. */
  async ensureHeld(): Promise<void> {
    if (!(await this.serial(() => this.renew()))) throw completionInProgress(1);
  }

  /** Ends the claim: `open` lets the client fix parts and retry, `done` records the completion. */
  async release(state: 'open' | 'done'): Promise<void> {
    this.stop();
    await this.serial(async () => {
      if (this.lost) return;
      await this.repo.releaseClaim(this.uuid, this.token, state);
    });
  }

  private serial<T>(op: () => Promise<T>): Promise<T> {
    const run = this.queue.then(op, op);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async renew(): Promise<boolean> {
    if (this.lost) return false;
    const next = Math.max(nowUs(), this.token + 1);
    if (await this.repo.renewClaim(this.uuid, this.token, next)) this.token = next;
    else this.lost = true;
    return !this.lost;
  }
}

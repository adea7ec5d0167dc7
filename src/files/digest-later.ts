/**
 * Digests after the answer: a large file stored on disk is committed with its own blob and no
 * digests (`md5` empty, no content row), and this job computes MD5 and SHA-256 once the client
 * has its answer, then gives the row its MD5 (the CDN's ETag) and its content address, sharing the
 * project's blob with the same bytes when there is one (docs/storage.md). On two cores the two
 * digests cost about 3 s of CPU per GiB beside the upload's own; here they no longer hold the
 * answer back (docs/performance.md).
 *
 * Safe to run twice: a row that already has its MD5, or no longer names the blob, is left alone.
 */
import type { BlobStore } from '../blobs/store.js';
import { DigestStream, type BlobDigests } from '../digests/digest.js';
import { digestLocalFileInOneThread } from '../digests/digest-threads.js';
import type { Db, DbOrTrx } from '../db/connect.js';
import { enqueue } from '../jobs/queue.js';
import type { JobPayloads } from '../jobs/kinds.js';
import type { FileRecord } from '../core/file-record.js';
import { nowUs } from '../core/time.js';
import type { ContentRepo } from './contents/repo.js';
import type { FileRepo } from './repo.js';
import { BLOB_DELETE_JOB } from './job-names.js';

export const DIGEST_LATER_JOB = 'file.digest';

/**
 * A duplicate blob (the same bytes were already the project's) is deleted this long after the row
 * moved to the shared one: CDN reads may take a file's row read up to 2 s before on another node
 * (files/record-cache.ts `recent`), and a read that began with the old row must still find its bytes.
 */
export const DUPLICATE_GRACE_MS = 60_000;

/** Writes the job that computes the digests of a row committed without them (same transaction). */
export async function enqueueLaterDigest(trx: DbOrTrx, row: FileRecord): Promise<void> {
  await enqueue(trx, { kind: DIGEST_LATER_JOB, payload: { projectId: row.projectId, uuid: row.uuid, blobKey: row.blobKey as string } });
}

export class LaterDigests {
  private readonly listeners = new Set<(uuid: string) => void>();

  constructor(
    private readonly db: Db,
    private readonly blobs: BlobStore,
    private readonly repo: FileRepo,
    private readonly contents: ContentRepo,
  ) {}

  /** Calls `listener` with a file's uuid once its digests committed (the CDN drops its cached row). */
  onDigested(listener: (uuid: string) => void): void {
    this.listeners.add(listener);
  }

  async run(p: JobPayloads[typeof DIGEST_LATER_JOB]): Promise<void> {
    const file = await this.repo.get(p.projectId, p.uuid);
    if (!file || !waitsForDigests(file, p.blobKey)) return;
    const digests = await this.digest(p.blobKey, file.size);
    const committed = await this.db.transaction(async (trx) => {
      // Locked against a removal: either it committed first (nothing to do here) or it sees the
      // row as this commit leaves it and releases the blob the row names then.
      const locked = await this.repo.getForUpdate(trx, p.projectId, p.uuid);
      if (!locked || !waitsForDigests(locked, p.blobKey)) return false;
      const blobKey = await this.contents.claim(trx, { projectId: p.projectId, sha256: digests.sha256, size: locked.size, stagedKey: p.blobKey, nowUs: nowUs() });
      await this.repo.update(trx, p.projectId, p.uuid, { md5: digests.md5, blob_key: blobKey });
      if (blobKey !== p.blobKey) {
        // The bytes were the project's already: this copy goes once no reader can still hold it.
        await enqueue(trx, { kind: BLOB_DELETE_JOB, payload: { projectId: p.projectId, uuid: p.uuid, blobKey: p.blobKey }, runAtUs: nowUs() + DUPLICATE_GRACE_MS * 1000 });
      }
      return true;
    });
    if (committed) for (const listener of this.listeners) listener(p.uuid);
  }

  /** Both digests of the blob: from its local file in a digest thread, else streamed once. */
  private async digest(blobKey: string, size: number): Promise<BlobDigests> {
    if (this.blobs.localPath) return digestLocalFileInOneThread(this.blobs.localPath(blobKey), size);
    const digest = new DigestStream();
    for await (const chunk of await this.blobs.get(blobKey)) digest.update(chunk as Buffer);
    return digest.digest();
  }
}

/** The row is live, still names the blob the job was written for, and has no digests yet. */
function waitsForDigests(file: FileRecord, blobKey: string): boolean {
  return file.removedUs === null && file.blobKey === blobKey && file.md5 === '';
}

/**
 * A completion's bytes: the chosen parts become one staged file, without copying when the parts
 * are where the object goes.
 *   - All in the bucket's upload (object storage): the bucket's CompleteMultipartUpload.
 *   - Parts 1..k in their slots of the data file, all but the last a whole slot (disk, as clients
 *     send them): the data file is cut to size and moved under the file's blob key.
 *   - Otherwise (parts as blobs of their own, a subset of the parts, parts of several sizes): the
 *     parts are streamed, in order, into a new blob (constant memory).
 * The file's uuid is the upload id when nothing is copied (its blob key was known from the start).
 * A large file is staged before its MD5 and SHA-256, as a large /base/ upload is (a job computes
 * them): the object's ETag is the multipart one, known from the parts already.
 */
import { Readable } from 'node:stream';
import { digestsLaterFor } from '../../digests/digest.js';
import type { AppContext } from '../../context.js';
import { fileBlobKey } from '../../core/file-record.js';
import type { StagedBlob } from '../../file-contract.js';
import { entityTooLarge } from '../body.js';
import type { BucketParts } from './bucket-parts.js';
import type { PartRow, UploadRow } from './repo.js';
import { SlotParts } from './slots.js';

export interface Assembled {
  staged: StagedBlob;
  /** The row did not commit: give the parts back (moved data file) or drop the copy. */
  undo(): Promise<void>;
}

export async function assembleParts(ctx: AppContext, places: { bucket: BucketParts | null; slots: SlotParts | null }, upload: UploadRow, parts: PartRow[]): Promise<Assembled> {
  const id = upload.upload_id;
  const total = parts.reduce((n, p) => n + Number(p.size), 0);
  const later = digestsLaterFor(ctx.config.digestLaterBytes, total);
  const blobKey = fileBlobKey(id);
  const { bucket, slots } = places;
  if (bucket && upload.store_upload_id && parts.every((p) => p.place === 'bucket')) {
    const put = await bucket.complete(id, upload.store_upload_id, parts, later);
    // A retry of the completion takes the object as it is (bucket-parts.ts).
    return { staged: { uuid: id, blobKey, size: put.size, md5: put.md5, sha256: put.sha256 }, undo: async () => undefined };
  }
  const slot = upload.slot_bytes === null ? null : Number(upload.slot_bytes);
  if (slots && slot !== null && parts.every((p) => p.place === 'slot') && SlotParts.contiguous(slot, parts)) {
    const put = await slots.moveInto(id, total, blobKey, later);
    return { staged: { uuid: id, blobKey, size: put.size, md5: put.md5, sha256: put.sha256 }, undo: () => slots.moveBack(id, blobKey) };
  }
  async function* concat(): AsyncGenerator<Buffer> {
    for (const part of parts) for await (const chunk of await readPart(ctx, slots, slot, id, part)) yield chunk as Buffer;
  }
  const staged = await ctx.files.stage(Readable.from(concat(), { objectMode: false }), total, entityTooLarge, undefined, later);
  return { staged, undo: () => ctx.files.discard([staged]) };
}

function readPart(ctx: AppContext, slots: SlotParts | null, slot: number | null, uploadId: string, part: PartRow): Promise<Readable> {
  if (part.place === 'blob') return ctx.blobs.get(part.blob_key);
  if (part.place === 'slot' && slots && slot !== null) return slots.read(uploadId, slot, part);
  // A part in the bucket's upload is readable only once the bucket assembled it.
  throw new Error(`part ${part.part_number} of ${uploadId} cannot be read where it is (${part.place})`);
}

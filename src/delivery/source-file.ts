/**
 * A stored file's bytes for the image pipeline. An original small enough for the originals cache
 * comes with its bytes in memory (decoding then reads neither the disk nor the header twice);
 * besides, a local path: the blob store's own when it has one (fs), otherwise, only when the
 * pipeline needs a file (ffmpeg) or the bytes are not in memory, a temporary copy made the one way
 * temporary copies are made (blobs/local-file.ts: under the store's spool directory, removed on
 * release, and swept at start after a crash).
 */
import { openLocal } from '../blobs/local-file.js';
import type { BlobStore } from '../blobs/store.js';
import type { FileRecord } from '../core/file-record.js';
import type { RenderSource } from '../media/render.js';
import type { OriginalsCache } from './originals.js';

export interface OpenedSource extends RenderSource {
  release(): Promise<void>;
}

const nothingToRelease = async (): Promise<void> => undefined;

export class StoredSources {
  constructor(private readonly blobs: BlobStore, private readonly originals: OriginalsCache) {}

  async open(file: FileRecord, opts: { needsPath: boolean }): Promise<OpenedSource> {
    const key = file.blobKey as string;
    const original = await this.originals.get(key, file.size);
    const source = { mime: file.mimeType, ...(original && { bytes: original.bytes, memo: original.memo }) };
    if (this.blobs.localPath) return { ...source, path: this.blobs.localPath(key), release: nothingToRelease };
    if (original && !opts.needsPath) return { ...source, path: null, release: nothingToRelease };
    const copy = await openLocal(this.blobs, key, original?.bytes);
    return { ...source, path: copy.path, release: copy.release };
  }
}

/**
 * Group archives (`/<group>~N/archive/zip|tar/[name]`): the original files only, streamed one at a
 * time in constant memory. The whole set is checked before the first byte goes out: every file
 * present (a removed one is a 404, spec) and the total under the uncompressed cap.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import tar from 'tar-stream';
import yazl from 'yazl';
import type { BlobStore } from '../blobs/store.js';
import type { FileRecord } from '../core/file-record.js';
import { contentDisposition } from '../http/cdn/headers.js';
import { restErrors } from '../core/error-catalogue/rest.js';

export type ArchiveFormat = 'zip' | 'tar';

interface Item {
  name: string;
  file: FileRecord;
}

export async function sendArchive(
  req: IncomingMessage,
  res: ServerResponse,
  blobs: BlobStore,
  files: Array<FileRecord | null>,
  opts: { format: ArchiveFormat; filename: string; maxBytes: number },
): Promise<void> {
  if (files.some((f) => f === null || f.blobKey === null)) throw restErrors.archiveFileRemoved();
  const present = files as FileRecord[];
  const total = present.reduce((sum, f) => sum + f.size, 0);
  if (total > opts.maxBytes) throw restErrors.archiveTooLarge(total, opts.maxBytes);
  const items = uniqueNames(present);
  res.writeHead(200, {
    'content-type': opts.format === 'zip' ? 'application/zip' : 'application/x-tar',
    'content-disposition': contentDisposition('attachment', opts.filename),
    'cache-control': 'public, max-age=3600',
    'access-control-allow-origin': '*',
    'x-content-type-options': 'nosniff',
  });
  if (req.method === 'HEAD') return void res.end();
  // A failure mid-stream can only cut the connection: the status line is already sent.
  const done = opts.format === 'zip' ? pipeline(zipStream(blobs, items), res) : pipeline(tarStream(blobs, items), res);
  await done.catch(() => res.destroy());
}

function zipStream(blobs: BlobStore, items: Item[]): NodeJS.ReadableStream {
  const zip = new yazl.ZipFile();
  for (const { name, file } of items) {
    // Stored, not deflated: most uploads are already compressed, and the CPU is better spent elsewhere.
    zip.addReadStreamLazy(name, { size: file.size, compress: false, mtime: new Date(file.uploadedUs / 1000) }, (cb) => {
      blobs.get(file.blobKey as string).then((s) => cb(null, s), (err: unknown) => cb(err, undefined as never));
    });
  }
  zip.end();
  return zip.outputStream;
}

function tarStream(blobs: BlobStore, items: Item[]): tar.Pack {
  const pack = tar.pack();
  (async () => {
    for (const { name, file } of items) {
      const entry = pack.entry({ name, size: file.size, mtime: new Date(file.uploadedUs / 1000), mode: 0o644 });
      await pipeline(await blobs.get(file.blobKey as string), entry);
    }
    pack.finalize();
  })().catch((err: unknown) => pack.destroy(err as Error));
  return pack;
}

/** Original names, made unique (`a.jpg`, `a (1).jpg`, …) and stripped of anything path-like. */
function uniqueNames(files: FileRecord[]): Item[] {
  const used = new Set<string>();
  return files.map((file) => {
    const base = file.originalFilename.replace(/[\\/]/g, '_').replace(/^\.+/, '_') || file.uuid;
    const ext = path.extname(base);
    const stem = base.slice(0, base.length - ext.length);
    let name = base;
    for (let k = 1; used.has(name.toLowerCase()); k++) name = `${stem} (${k})${ext}`;
    used.add(name.toLowerCase());
    return { name, file };
  });
}

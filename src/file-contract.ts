/**
 * What the other features ask of the files feature's service: AppContext carries it as
 * `ctx.files`, and FileService (src/files/service.ts) implements it. Declared here, below both
 * the context and src/files/, so the context names no feature folder; the files feature's own
 * modules see the whole FileService (src/files/context.ts).
 */
import type { Readable } from 'node:stream';
import type { DbOrTrx } from './db/connect.js';
import type { FileRecord, StoreChoice } from './core/file-record.js';
import type { Initiator } from './jobs/file-events.js';
import type { ProjectRow } from './projects/service.js';

export interface IngestOptions {
  originalFilename: string | undefined;
  /** The Content-Type the client gave the file (part header, multipart `content_type`, remote response); null when none. */
  declaredType: string | null;
  store: StoreChoice;
  metadata: Record<string, string>;
  maxBytes: number;
  onTooLarge: () => Error;
  initiator: Initiator;
  sourceUrl?: string | null;
  /** The new file's uuid when the caller chose it in advance (a conversion answers it at once). */
  uuid?: string;
  /** Normalized tags (core/tags.ts); none when absent. */
  tags?: string[];
  /** The S3 key (PutObject, docs/s3.md): the live file holding it is removed in the new row's transaction. */
  objectKey?: string;
  /** The S3 ETag of an object assembled from parts. */
  objectEtag?: string;
}

export interface StagedBlob {
  uuid: string;
  blobKey: string;
  size: number;
  /** Empty when the digests come later (`sha256` null). */
  md5: string;
  /**
   * Content address: a committed row shares the project's blob with the same SHA-256, if any.
   * Null: not computed yet; the row commits with its own blob and a `file.digest` job computes
   * both digests after the answer, then shares the blob (files/digest-later.ts).
   */
  sha256: string | null;
  /** The first bytes (inspect.ts's INSPECT_HEAD_BYTES), kept as they streamed in, when the store returned them. */
  head?: Buffer;
}

/** Work that must commit with a new file's row (add-ons run on upload enqueue theirs here). */
export type UploadHook = (trx: DbOrTrx, file: FileRecord, initiator: Initiator) => Promise<void>;

/** An add-on's result for `appdata.<name>` and what else it asks for (see writeAddonResult). */
export interface AddonResultWrite {
  name: string;
  version: string;
  data: unknown;
  initiator: Initiator;
  /** Also record `file.infected`. */
  infected: boolean;
  /** Remove the file in the same transaction (its `file.deleted` follows the appdata events). */
  remove: boolean;
}

/** How a removal may be taken back: `restoreMs` after it, a store brings the file back (0: never). */
export interface Removal {
  restoreMs: number;
}

/** Each method is described where FileService implements it (src/files/service.ts). */
export interface FileContract {
  /** Adds work to the transaction of every new file's row (it fails the upload if it throws). */
  onUpload(hook: UploadHook): void;

  ingest(project: ProjectRow, source: Readable, opts: IngestOptions): Promise<FileRecord>;
  stage(source: Readable, maxBytes: number, onTooLarge: () => Error, uuid?: string, digestsLater?: boolean): Promise<StagedBlob>;
  discard(staged: StagedBlob[]): Promise<void>;
  commit(project: ProjectRow, staged: StagedBlob, opts: Omit<IngestOptions, 'maxBytes' | 'onTooLarge'>): Promise<FileRecord>;

  find(projectId: number, uuid: string): Promise<FileRecord | null>;
  findMany(projectId: number, uuids: string[], db?: DbOrTrx): Promise<FileRecord[]>;
  byUuid(uuid: string): Promise<FileRecord | null>;
  /** Any project's file (removed ones included) exactly as stored now, maybe from the file row cache; null when unknown. */
  current(uuid: string): Promise<Readonly<FileRecord> | null>;
  /**
   * What `current` would answer from memory alone at the change stamp `stamp` (one just read from
   * the store, db/change-stamp.ts), without a promise; undefined when `current` would read the store.
   */
  currentAt(uuid: string, stamp: string): Readonly<FileRecord> | null | undefined;
  recent(uuid: string): Promise<Readonly<FileRecord> | null>;
  latestFromUrl(projectId: number, sourceUrl: string): Promise<FileRecord | null>;

  remove(projectId: number, uuid: string, initiator: Initiator, how?: Removal): Promise<FileRecord>;
  batch(projectId: number, ids: string[], action: 'store' | 'remove', initiator: Initiator, how?: Removal): Promise<{ problems: Record<string, string>; result: FileRecord[] }>;
  writeAddonResult(projectId: number, uuid: string, w: AddonResultWrite, alongside: (trx: DbOrTrx, written: boolean) => Promise<void>): Promise<boolean>;
}

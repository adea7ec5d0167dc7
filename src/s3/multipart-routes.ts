/** Multipart upload requests of the S3 surface: which request is one, and the module answering it. */
import type { Caller } from './auth.js';
import type { S3Request } from './request.js';

export interface MultipartHandlers {
  /** ListMultipartUploads (`GET /<bucket>?uploads`): its answer, or null when `r` is another request. */
  bucket(r: S3Request, caller: Caller, label: (op: string) => void): Promise<void> | null;
  /** Create, UploadPart, Complete, Abort, ListParts on `key`: the answer, or null for another request. */
  object(r: S3Request, caller: Caller, key: string, label: (op: string) => void): Promise<void> | null;
}

/** Until multipart uploads are served: every multipart request is refused with S3's 501. */
export const noMultipart: MultipartHandlers = {
  bucket: () => null,
  object: () => null,
};

/** Tables of the S3-compatible surface (merged into Database in ../schema.ts). */

export interface S3MultipartUploadsTable {
  upload_id: string;
  project_id: number;
  object_key: string;
  content_type: string;
  /** JSON text: Record<string, string>. */
  metadata: string;
  created_us: number;
  expires_us: number;
  /** Local files: each part's slot in the upload's data file (part n at (n - 1) × slot); null until the first part. */
  slot_bytes: number | null;
  /** Object storage: the bucket's multipart upload the parts go to; null elsewhere. */
  store_upload_id: string | null;
}

export interface S3MultipartPartsTable {
  upload_id: string;
  part_number: number;
  size: number;
  /** Lowercase hex MD5 of the part (its ETag). */
  md5: string;
  /** `blob` parts: their blob; `slot` parts: the upload's data file; `bucket` parts: empty. */
  blob_key: string;
  uploaded_us: number;
  place: PartPlace;
  /** `bucket` parts: the bucket's ETag for the part (CompleteMultipartUpload names it). */
  store_etag: string | null;
}

/** Where a part's bytes are: a blob of its own, its slot in the upload's data file, the bucket's multipart upload. */
export type PartPlace = 'blob' | 'slot' | 'bucket';

export interface S3Tables {
  s3_multipart_uploads: S3MultipartUploadsTable;
  s3_multipart_parts: S3MultipartPartsTable;
}

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
}

export interface S3MultipartPartsTable {
  upload_id: string;
  part_number: number;
  size: number;
  /** Lowercase hex MD5 of the part (its ETag). */
  md5: string;
  blob_key: string;
  uploaded_us: number;
}

export interface S3Tables {
  s3_multipart_uploads: S3MultipartUploadsTable;
  s3_multipart_parts: S3MultipartPartsTable;
}

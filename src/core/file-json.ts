/** Wire shapes of a file: the REST v0.7 file object and the Upload API's file info object. */
import type { FileRecord } from './file-record.js';
import { formatUs, formatUsOrNull } from './time.js';

export interface UrlBases {
  rest: string;
  upload: string;
  cdn: string;
}

/** REST API v0.7 file object, field for field (spec table + wire-reference §2.3). */
export function restFileJson(f: FileRecord, bases: UrlBases, opts: { includeAppdata?: boolean } = {}): Record<string, unknown> {
  const out: Record<string, unknown> = {
    datetime_removed: formatUsOrNull(f.removedUs),
    datetime_stored: formatUsOrNull(f.storedUs),
    datetime_uploaded: formatUs(f.uploadedUs),
    is_image: f.isImage,
    is_ready: f.isReady,
    mime_type: f.declaredType,
    original_file_url: f.removedUs === null ? `${bases.cdn}/${f.uuid}/${f.filename}` : null,
    original_filename: f.originalFilename,
    size: f.size,
    url: `${bases.rest}/files/${f.uuid}/`,
    uuid: f.uuid,
    variations: null,
    content_info: f.contentInfo,
    metadata: f.metadata,
  };
  if (opts.includeAppdata) out['appdata'] = f.appdata;
  return out;
}

/** Upload API "fileUploadInfo" (wire-reference §1.3): a different shape from the REST object. */
export function uploadInfoJson(f: FileRecord): Record<string, unknown> {
  const image = f.contentInfo?.image ?? null;
  const video = f.contentInfo?.video ?? null;
  return {
    size: f.size,
    total: f.size,
    done: f.size,
    uuid: f.uuid,
    file_id: f.uuid,
    original_filename: f.originalFilename,
    is_image: f.isImage,
    is_stored: f.storedUs !== null,
    image_info: image,
    video_info: video
      ? { duration: video.duration, format: video.format, bitrate: video.bitrate, audio: video.audio[0] ?? null, video: video.video[0] ?? null }
      : null,
    content_info: f.contentInfo,
    is_ready: f.isReady,
    filename: f.filename,
    mime_type: f.declaredType,
    metadata: f.metadata,
    s3_bucket: null,
  };
}

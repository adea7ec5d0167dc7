/**
 * Wire shapes of a file, shared by REST, Upload and webhooks: the REST v0.7 file object and the
 * Upload API's file info object, typed by their schemas (wire-shapes.ts). Field order is the wire
 * order (clients diff responses).
 */
import type { z } from 'zod';
import type { FileRecord } from './file-record.js';
import type { restFileSchema, uploadInfoSchema, uploadVideoInfoSchema } from './wire-shapes.js';
import { formatUs, formatUsOrNull } from './time.js';

/** The REST API versions served (spec "Versioning"; parsed from `Accept` in http/rest/version.ts). */
export type RestVersion = '0.6' | '0.7';

export interface UrlBases {
  rest: string;
  upload: string;
  cdn: string;
}

export type RestFileJson = z.output<typeof restFileSchema>;
export type UploadVideoInfoJson = z.output<typeof uploadVideoInfoSchema>;
export type UploadInfoJson = z.output<typeof uploadInfoSchema>;

export function restFileJson(f: FileRecord, bases: UrlBases, opts: { includeAppdata?: boolean } = {}): RestFileJson {
  const out: RestFileJson = {
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
    tags: f.tags,
  };
  if (opts.includeAppdata) out.appdata = f.appdata;
  return out;
}

/** The legacy single-stream `video_info` of the Upload API and of REST v0.6. */
export function legacyVideoInfo(f: FileRecord): UploadVideoInfoJson | null {
  const video = f.contentInfo?.video;
  return video ? { duration: video.duration, format: video.format, bitrate: video.bitrate, audio: video.audio[0] ?? null, video: video.video[0] ?? null } : null;
}

/** A different shape from the REST object, for the same file. */
export function uploadInfoJson(f: FileRecord): UploadInfoJson {
  const image = f.contentInfo?.image ?? null;
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
    video_info: legacyVideoInfo(f),
    content_info: f.contentInfo,
    is_ready: f.isReady,
    filename: f.filename,
    mime_type: f.declaredType,
    metadata: f.metadata,
    s3_bucket: null,
    tags: f.tags,
  };
}

/**
 * Wire shapes of a file, shared by REST, Upload and webhooks: the REST v0.7 file object and the
 * Upload API's file info object. Field order is the wire order (clients diff responses).
 */
import type { AppdataEntry, ContentInfo, FileRecord, ImageInfo, VideoInfo } from './file-record.js';
import { formatUs, formatUsOrNull } from './time.js';

/** The REST API versions served (spec "Versioning"; parsed from `Accept` in http/rest/version.ts). */
export type RestVersion = '0.6' | '0.7';

export interface UrlBases {
  rest: string;
  upload: string;
  cdn: string;
}

/** REST API v0.7 file object (spec table + wire-reference §2.3). */
export interface RestFileJson {
  datetime_removed: string | null;
  datetime_stored: string | null;
  datetime_uploaded: string;
  is_image: boolean;
  is_ready: boolean;
  mime_type: string;
  original_file_url: string | null;
  original_filename: string;
  size: number;
  url: string;
  uuid: string;
  variations: null;
  content_info: ContentInfo | null;
  metadata: Record<string, string>;
  /** The file's tags (JS rest-client 6.19+ reads them). */
  tags: string[];
  /** Only with `?include=appdata` and in webhook payloads. */
  appdata?: Record<string, AppdataEntry>;
}

/** The Upload API's `video_info`: the first audio and video streams only. */
export interface UploadVideoInfoJson {
  duration: number;
  format: string;
  bitrate: number;
  audio: VideoInfo['audio'][number] | null;
  video: VideoInfo['video'][number] | null;
}

/** Upload API "fileUploadInfo" (wire-reference §1.3). */
export interface UploadInfoJson {
  size: number;
  total: number;
  done: number;
  uuid: string;
  file_id: string;
  original_filename: string;
  is_image: boolean;
  is_stored: boolean;
  image_info: ImageInfo | null;
  video_info: UploadVideoInfoJson | null;
  content_info: ContentInfo | null;
  is_ready: boolean;
  filename: string;
  mime_type: string;
  metadata: Record<string, string>;
  s3_bucket: null;
  tags: string[];
}

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

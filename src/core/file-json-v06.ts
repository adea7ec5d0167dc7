/**
 * The REST API v0.6 file object (spec "Versioning": `image_info`/`video_info` instead of
 * `content_info`, `rekognition_info` instead of `appdata`), and the one switch every REST route
 * shapes files through, so a route never knows which version it answers.
 */
import type { z } from 'zod';
import type { FileRecord } from './file-record.js';
import { legacyVideoInfo, restFileJson, type RestFileJson, type RestVersion, type UrlBases } from './file-json.js';
import type { rekognitionInfoSchema, restFileV06Schema } from './wire-shapes.js';
import { formatUs, formatUsOrNull } from './time.js';

export type RekognitionInfo = z.output<typeof rekognitionInfoSchema>;
export type RestFileJsonV06 = z.output<typeof restFileV06Schema>;
export type AnyRestFileJson = RestFileJson | RestFileJsonV06;

export function restFileJsonV06(f: FileRecord, bases: UrlBases, opts: { rekognition?: boolean } = {}): RestFileJsonV06 {
  const out: RestFileJsonV06 = {
    datetime_removed: formatUsOrNull(f.removedUs),
    datetime_stored: formatUsOrNull(f.storedUs),
    datetime_uploaded: formatUs(f.uploadedUs),
    image_info: f.contentInfo?.image ?? null,
    is_image: f.isImage,
    is_ready: f.isReady,
    mime_type: f.declaredType,
    original_file_url: f.removedUs === null ? `${bases.cdn}/${f.uuid}/${f.filename}` : null,
    original_filename: f.originalFilename,
    size: f.size,
    url: `${bases.rest}/files/${f.uuid}/`,
    uuid: f.uuid,
    variations: null,
    video_info: legacyVideoInfo(f),
    source: f.sourceUrl,
  };
  if (opts.rekognition) out.rekognition_info = rekognitionInfo(f);
  return out;
}

/**
 * The labels add-on's result (`appdata.aws_rekognition_detect_labels`, Rekognition's
 * `Labels[].{Name, Confidence}` in percent) as v0.6's name -> confidence map in 0..1; null until
 * the add-on ran on the file.
 */
export function rekognitionInfo(f: FileRecord): RekognitionInfo | null {
  const data = f.appdata['aws_rekognition_detect_labels']?.data as { Labels?: unknown } | undefined;
  if (!data || !Array.isArray(data.Labels)) return null;
  const out: RekognitionInfo = {};
  for (const label of data.Labels as Array<{ Name?: unknown; Confidence?: unknown }>) {
    if (typeof label.Name === 'string' && typeof label.Confidence === 'number') out[label.Name] = Math.round(label.Confidence * 100) / 10000;
  }
  return out;
}

/** A REST file object in the request's version; `extras` = appdata (0.7) / rekognition_info (0.6). */
export function restFileFor(version: RestVersion, f: FileRecord, bases: UrlBases, extras = false): AnyRestFileJson {
  return version === '0.6' ? restFileJsonV06(f, bases, { rekognition: extras }) : restFileJson(f, bases, { includeAppdata: extras });
}

/** The query parameter that asks for the extras, and its one allowed value, per version. */
export function extrasParam(version: RestVersion): { name: string; value: string } {
  return version === '0.6' ? { name: 'add_fields', value: 'rekognition_info' } : { name: 'include', value: 'appdata' };
}

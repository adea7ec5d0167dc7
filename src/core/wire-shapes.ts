/**
 * The wire shapes of a file, as zod schemas: the one declaration of each. The TypeScript types of
 * the builders (file-json.ts, file-json-v06.ts) and of the stored facts (file-record.ts) are
 * inferred from them, the OpenAPI documents are generated from them (through the routes'
 * descriptions), and the test servers hold every answer against them (http/common/response-check.ts).
 * Field order is the wire order (wire-reference §1.3, §2.3).
 */
import { z } from 'zod';

export const imageInfoSchema = z.object({
  format: z.string(),
  width: z.number().int(),
  height: z.number().int(),
  sequence: z.boolean(),
  color_mode: z.string(),
  orientation: z.number().int().nullable(),
  geo_location: z.object({ latitude: z.number(), longitude: z.number() }).nullable(),
  datetime_original: z.string().nullable(),
  dpi: z.tuple([z.number(), z.number()]).nullable(),
});

const audioStream = z.object({ codec: z.string(), bitrate: z.number(), channels: z.number(), sample_rate: z.number() });
const videoStream = z.object({ codec: z.string(), width: z.number(), height: z.number(), bitrate: z.number(), frame_rate: z.number() });

export const videoInfoSchema = z.object({
  format: z.string(),
  bitrate: z.number(),
  duration: z.number(),
  audio: z.array(audioStream),
  video: z.array(videoStream),
});

export const contentInfoSchema = z.object({
  mime: z.object({ mime: z.string(), type: z.string(), subtype: z.string() }),
  image: imageInfoSchema.optional(),
  video: videoInfoSchema.optional(),
});

/** One add-on's result on a file (`appdata.<add-on name>`). */
export const appdataEntrySchema = z.object({ data: z.unknown(), version: z.string(), datetime_created: z.string(), datetime_updated: z.string() });

const metadata = z.record(z.string(), z.string()).meta({ description: 'Key/value metadata of the file.' });
const appdata = z.record(z.string(), appdataEntrySchema).meta({ description: 'Add-on results by add-on name.' });

/** REST API v0.7 file object (spec table + wire-reference §2.3). */
export const restFileSchema = z.object({
  datetime_removed: z.string().nullable(),
  datetime_stored: z.string().nullable(),
  datetime_uploaded: z.string(),
  is_image: z.boolean(),
  is_ready: z.boolean(),
  mime_type: z.string(),
  original_file_url: z.string().nullable(),
  original_filename: z.string(),
  size: z.number().int(),
  url: z.string(),
  uuid: z.string(),
  variations: z.null(),
  content_info: contentInfoSchema.nullable(),
  metadata,
  /** The file's tags (JS rest-client 6.19+ reads them). */
  tags: z.array(z.string()),
  appdata: appdata.optional().meta({ description: 'Only with `include=appdata` (and in webhook payloads).' }),
});

/** The legacy single-stream `video_info` of the Upload API and of REST v0.6: the first audio and video streams only. */
export const uploadVideoInfoSchema = z.object({ duration: z.number(), format: z.string(), bitrate: z.number(), audio: audioStream.nullable(), video: videoStream.nullable() });

/** Upload API "fileUploadInfo" (wire-reference §1.3). */
export const uploadInfoSchema = z.object({
  size: z.number().int(),
  total: z.number().int(),
  done: z.number().int(),
  uuid: z.string(),
  file_id: z.string(),
  original_filename: z.string(),
  is_image: z.boolean(),
  is_stored: z.boolean(),
  image_info: imageInfoSchema.nullable(),
  video_info: uploadVideoInfoSchema.nullable(),
  content_info: contentInfoSchema.nullable(),
  is_ready: z.boolean(),
  filename: z.string(),
  mime_type: z.string(),
  metadata,
  s3_bucket: z.null(),
  tags: z.array(z.string()),
});

/** Label name -> confidence (0..1), the v0.6 form of the labels add-on's result. */
export const rekognitionInfoSchema = z.record(z.string(), z.number());

/** REST API v0.6 file object (spec "Versioning"). Field order is the v0.6 wire order. */
export const restFileV06Schema = z.object({
  datetime_removed: z.string().nullable(),
  datetime_stored: z.string().nullable(),
  datetime_uploaded: z.string(),
  image_info: imageInfoSchema.nullable(),
  is_image: z.boolean(),
  is_ready: z.boolean(),
  mime_type: z.string(),
  original_file_url: z.string().nullable(),
  original_filename: z.string(),
  size: z.number().int(),
  url: z.string(),
  uuid: z.string(),
  variations: z.null(),
  video_info: uploadVideoInfoSchema.nullable(),
  /** Where the file came from: the URL of a `/from_url/` upload, else null. */
  source: z.string().nullable(),
  rekognition_info: rekognitionInfoSchema.nullable().optional().meta({ description: 'Only with `add_fields=rekognition_info` (list, info) and on store/delete answers.' }),
});

/** A REST file object in either version the request asked for (`Accept`). */
export const anyRestFileSchema = z.union([restFileSchema, restFileV06Schema]);

/** A page of a cursor-paginated REST list. */
export function restPage<T extends z.ZodType>(item: T) {
  return z.object({
    next: z.string().nullable(),
    previous: z.string().nullable(),
    total: z.number().int(),
    per_page: z.number().int(),
    results: z.array(item),
  });
}

/** Any JSON object (a shape the document does not spell out). */
export const jsonObject = z.object({}).catchall(z.unknown());

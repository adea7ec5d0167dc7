/**
 * Response shapes shared by several routes, as zod schemas for the OpenAPI documents. They
 * describe what src/core/file-json.ts writes (wire-reference §1.3, §2.3); the routes' tests check
 * the wire itself.
 */
import { z } from 'zod';

const imageInfo = z.object({
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

const videoInfo = z.object({
  format: z.string(),
  bitrate: z.number(),
  duration: z.number(),
  audio: z.array(z.object({ codec: z.string(), bitrate: z.number(), channels: z.number(), sample_rate: z.number() })),
  video: z.array(z.object({ codec: z.string(), width: z.number(), height: z.number(), bitrate: z.number(), frame_rate: z.number() })),
});

export const contentInfoJson = z
  .object({
    mime: z.object({ mime: z.string(), type: z.string(), subtype: z.string() }),
    image: imageInfo.optional(),
    video: videoInfo.optional(),
  })
  .nullable();

const metadata = z.record(z.string(), z.string()).meta({ description: 'Key/value metadata of the file.' });
const appdata = z.record(z.string(), z.object({}).catchall(z.unknown())).meta({ description: 'Add-on results by add-on name.' });

/** REST v0.7 file object. */
export const restFileJson = z.object({
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
  content_info: contentInfoJson,
  metadata,
  tags: z.array(z.string()),
  appdata: appdata.optional().meta({ description: 'Only with `include=appdata`.' }),
});

/** Upload API file info. */
export const uploadInfoJson = z.object({
  size: z.number().int(),
  total: z.number().int(),
  done: z.number().int(),
  uuid: z.string(),
  file_id: z.string(),
  original_filename: z.string(),
  is_image: z.boolean(),
  is_stored: z.boolean(),
  image_info: imageInfo.nullable(),
  video_info: z.object({ duration: z.number(), format: z.string(), bitrate: z.number(), audio: z.unknown(), video: z.unknown() }).nullable(),
  content_info: contentInfoJson,
  is_ready: z.boolean(),
  filename: z.string(),
  mime_type: z.string(),
  metadata,
  s3_bucket: z.null(),
  tags: z.array(z.string()),
});

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

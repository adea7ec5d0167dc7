/** Wire shapes of the conversions feature, declared once as schemas (the types are inferred from them). */
import { z } from 'zod';

/** One accepted path of a conversion request. */
export const submittedSchema = z.object({
  original_source: z.string(),
  token: z.number().int(),
  uuid: z.string(),
  thumbnails_group_uuid: z.string().optional(),
});

export const statusSchema = z.object({
  status: z.enum(['pending', 'processing', 'finished', 'failed', 'cancelled']),
  error: z.string().nullable(),
  result: z.object({ uuid: z.string(), thumbnails_group_uuid: z.string().optional() }),
});

const convertedGroups = z.record(z.string(), z.string());

export const documentInfoSchema = z.object({
  error: z.null(),
  format: z.object({ name: z.string(), conversion_formats: z.array(z.object({ name: z.string() })), converted_groups: convertedGroups }),
  /** The OpenAPI (and the JS client) read it at the top level, the live service nests it: both. */
  converted_groups: convertedGroups,
});

export type SubmittedJson = z.output<typeof submittedSchema>;
export type StatusJson = z.output<typeof statusSchema>;
export type DocumentInfoJson = z.output<typeof documentInfoSchema>;

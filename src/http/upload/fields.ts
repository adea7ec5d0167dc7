/**
 * Upload API fields as route schemas (docs/openapi.md). The Upload API merges the query string
 * with urlencoded or multipart bodies (the body wins), judges the public key first (403 before
 * 400) and streams multipart files, so the seam cannot validate these before the handler. Instead
 * each route declares one zod object of its own fields, in the order the wire's errors depend on;
 * the route's documented body is built from that same object, and the handler validates the
 * merged parameters with it (`uploadFieldsOf`) once the key is judged and the stream is read.
 */
import { z } from 'zod';
import { parseBoolean, UPLOAD_API_BOOLEANS } from '../../core/booleans.js';
import { validateMetadata } from '../../core/metadata.js';
import { parseTagList } from '../../core/tags.js';
import { checked, parsedField } from '../common/route.js';
import { firstOf, type Params } from './params.js';
import { uploadInput } from './route.js';
import { uploadErrors } from '../../core/error-catalogue/upload.js';

/** The metadata fields' key in the schemas: every `metadata[<key>]` field, gathered as entries. */
export const METADATA_KEY = 'metadata[<key>]' as const;

const text = () => z.string().optional();

function storeNames(aliases: boolean): string[] {
  return aliases ? ['SVC_STORE', 'UPLOADCARE_STORE', 'store'] : ['SVC_STORE', 'store'];
}

/** `1`, `0` or `auto` (absent or empty: auto). */
export const storeField = (description: string) =>
  checked(text(), (v): boolean | 'auto' => {
    if (v === undefined || v === '' || v === 'auto') return 'auto';
    const b = parseBoolean(v, UPLOAD_API_BOOLEANS);
    if (b !== undefined) return b;
    throw uploadErrors.storeInvalid();
  }).meta({ type: 'string', enum: ['1', '0', 'auto'], description });

/** `metadata[key]=value` fields, validated with the spec's limits. */
export const metadataField = parsedField(
  { type: 'string', description: '`metadata[<key>]=<value>`: one field per metadata key (the key inside the brackets).' },
  (entries) => validateMetadata(entries as Array<[string, string]>),
).optional();

/** The `tags=a,b` field (SDK 6.19), normalized; a bad tag is a 400 naming it. */
export const tagsField = checked(text(), (v) => parseTagList(v)).meta({ type: 'string', description: 'Comma-separated tags of the new file (lowercased, trimmed).' });

/** An Upload API flag: the API's boolean spellings; anything else (or nothing) is undefined (the route's default). */
export const flagField = (description: string) => checked(text(), (v) => parseBoolean(v, UPLOAD_API_BOOLEANS)).meta({ type: 'string', description: `${description} (1 or 0).` });

/**
 * The merged parameters as the field schemas read them: every field by its name, the store choice
 * (under whichever alias carried it) under `store`, and the metadata fields as entries under
 * `metadata[<key>]`.
 */
export function fieldValues(params: Params, aliases: boolean): Record<string, unknown> {
  const metadata: Array<[string, string]> = [];
  for (const [k, v] of params) {
    const m = /^metadata\[(.*)\]$/s.exec(k);
    if (m) metadata.push([m[1] ?? '', v]);
  }
  const store = firstOf(params, storeNames(aliases));
  return { ...Object.fromEntries(params), store, [METADATA_KEY]: metadata };
}

/** Validates a route's fields (its schema) against the merged parameters; the first bad field's error is thrown. */
export function uploadFieldsOf<S extends z.ZodType>(schema: S, params: Params, aliases: boolean): z.output<S> {
  return uploadInput(schema, fieldValues(params, aliases));
}

/** The fields of every route that makes a file, in the order their errors are reported. */
export const newFileFields = {
  store: storeField("`1`, `0` or `auto` (the project's autostore setting); also `UPLOADCARE_STORE` or `SVC_STORE`."),
  [METADATA_KEY]: metadataField,
  tags: tagsField,
};

/** The new file's choices from `newFileFields`' parsed values. */
export function newFileOf(v: { store: boolean | 'auto'; [METADATA_KEY]?: Record<string, string> | undefined; tags: string[] }): { store: boolean | 'auto'; metadata: Record<string, string>; tags: string[] } {
  return { store: v.store, metadata: v[METADATA_KEY] ?? {}, tags: v.tags };
}

/** `newFileFields` alone (/base/, tus): validated into the new file's choices. */
export const newFileSchema = z.object(newFileFields).transform(newFileOf);

/**
 * POST /base/: direct upload (wire-reference §1.4). File parts are streamed to durable storage as
 * they arrive (the SDK sends the file before the public key field), then the request goes through
 * the upload-request flow (project, store choice, metadata, credentials), and only then rows are
 * committed. On any failure the staged bytes are discarded, so nothing half-done stays behind.
 *
 * No anonymous disk writes: a public key in the query string is checked before the body is read
 * (unknown: 403 at once), a key field in the body as soon as it arrives, and file bytes that arrive
 * before any known key spend from a budget per client address and in all (anonymous-staging.ts).
 */
import { pipeline } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { MultipartFile } from '@fastify/multipart';
import type { FilesContext } from './context.js';
import { apiInitiator } from '../jobs/file-events.js';
import type { StagedBlob } from '../file-contract.js';
import { fileTooLarge, mapMultipartError } from '../http/upload/errors.js';
import { MAX_FILES_PER_REQUEST } from '../http/upload/limits.js';
import { sendJson } from '../http/common/json.js';
import { checkNoNulls, publicKeyFields, queryParams, sdkHeaderKey } from '../http/upload/params.js';
import { newFileFields, newFileSchema, uploadFieldsOf } from '../http/upload/fields.js';
import { AnonymousStagingBudget, type AnonymousStaging } from './anonymous-staging.js';
import { RequestProject, runUploadRequest } from '../http/upload/request-flow.js';
import { FORM_TYPES, uploadFieldDocs, uploadRoute } from '../http/upload/route.js';
import { digestsLaterFor } from '../digests/digest.js';
import { uploadErrors } from '../core/error-catalogue/upload.js';

interface StagedPart {
  field: string;
  filename: string | undefined;
  /** The part's Content-Type (busboy reports a missing one as text/plain, as RFC 7578 says). */
  declaredType: string;
  staged: StagedBlob;
}

const { UPLOADCARE_PUB_KEY, signature, expire } = uploadFieldDocs;

// The body is streamed by the handler (files staged as they arrive), so the seam only documents it;
// the handler validates the fields with newFileSchema (the same field schemas) after the stream.
const BASE_SPEC = {
  method: 'POST',
  url: '/base/',
  summary: 'Upload files directly',
  description: 'Every file part becomes a file; the answer maps each part\'s field name to its UUID.',
  query: z.object({ jsonerrors: uploadFieldDocs.jsonerrors }),
  body: {
    schema: z
      .object({ UPLOADCARE_PUB_KEY, ...newFileFields, signature, expire, file: z.string().meta({ format: 'binary', description: 'A file (any field name; several allowed).' }) })
      .catchall(z.string()),
    contentTypes: FORM_TYPES,
    documentOnly: true,
  },
  responses: { 200: { description: 'Field name to the new file\'s UUID.', schema: z.record(z.string(), z.string()) } },
} as const;

export function baseRoute(ctx: FilesContext) {
  const budget = new AnonymousStagingBudget(ctx.config.anonymousStagingPerIpBytes, ctx.config.anonymousStagingTotalBytes);
  return async function plugin(app: FastifyInstance): Promise<void> {
    uploadRoute(app, BASE_SPEC, async (req, reply) => {
      const params = queryParams(req.query);
      const key = new RequestProject(ctx, params, 'base');
      const parts: StagedPart[] = [];
      const staging = budget.open(req.ip);
      try {
        if (req.isMultipart()) {
          if (await keyKnownBeforeBody(req, key)) staging.release();
          await readParts(ctx, req, key, parts, staging);
        }
        checkNoNulls(params);
        const out = await runUploadRequest(ctx, req, key, {
          endpoint: '/base/',
          fileCount: parts.length,
          fields: () => {
            // The public key is judged before the files (the SDK's tests post an empty body without one).
            if (parts.length === 0) throw uploadErrors.filesRequired();
            return uploadFieldsOf(newFileSchema, params, ctx.config.sdkAliases);
          },
          run: async (project, f) => {
            const uuids: Record<string, string> = {};
            for (const part of parts) {
              const file = await ctx.files.commit(project, part.staged, { originalFilename: part.filename, declaredType: part.declaredType, ...f, initiator: apiInitiator(req.id) });
              uuids[part.field] = file.uuid;
            }
            return uuids;
          },
        });
        // No poke of the job worker here: every job the upload wrote (its events, an add-on's run)
        // went through enqueue, which wakes the workers for that kind (jobs/wake.ts). A poke of
        // every kind claimed each job group in turn, about 14 statements and 7 WAL syncs per upload.
        return sendJson(reply, 200, out);
      } catch (err) {
        await ctx.files.discard(parts.map((p) => p.staged));
        throw mapMultipartError(err);
      } finally {
        staging.release();
      }
    });
  };
}

/**
 * Whether the request names a known project before its body: a key in the query string must be
 * valid (else the 403 goes out before a byte of the body is read); the JS SDK's client header
 * names the key its body carries after the file.
 */
async function keyKnownBeforeBody(req: FastifyRequest, key: RequestProject): Promise<boolean> {
  if (key.named) {
    checkNoNulls(key.params);
    await key.require();
    return true;
  }
  const claimed = sdkHeaderKey(req.headers);
  return claimed !== null && (await key.lookup(claimed)) !== null;
}

function anonymousBytesRefused(ctx: FilesContext): Error {
  const name = ctx.config.sdkAliases ? 'UPLOADCARE_PUB_KEY' : 'SVC_PUB_KEY';
  return uploadErrors.publicKeyRequiredBeforeFile(name);
}

async function readParts(ctx: FilesContext, req: FastifyRequest, key: RequestProject, out: StagedPart[], staging: AnonymousStaging): Promise<void> {
  const keyFields = publicKeyFields(ctx.config.sdkAliases);
  for await (const part of req.parts()) {
    if (part.type === 'field') {
      // A part without a name (`Content-Disposition: form-data` alone) carries no parameter.
      if (typeof part.value !== 'string' || typeof part.fieldname !== 'string') continue;
      key.params.set(part.fieldname, part.value);
      // A key field is checked as it arrives: unknown stops the request before more bytes are staged.
      if (keyFields.includes(part.fieldname)) {
        checkNoNulls(key.params);
        await key.require();
        staging.release();
      }
      continue;
    }
    const file = part as MultipartFile;
    if (out.length >= MAX_FILES_PER_REQUEST) throw uploadErrors.tooManyFiles();
    // Once a known key has arrived the meter would only pass the bytes on: without it a part costs
    // one stream and one pipeline less (and the AbortError DOMException every pipeline's end builds).
    const source = staging.isReleased ? file.file : pipeline(file.file, staging.meter(() => anonymousBytesRefused(ctx)), () => undefined);
    // A large request's files are answered before their digests (digest-later.ts).
    const declared = Number(req.headers['content-length']);
    const later = digestsLaterFor(ctx.config.digestLaterBytes, declared);
    // A part is never longer than its request: the store may judge the body small before its first byte.
    const atMost = Number.isFinite(declared) ? Math.min(ctx.config.maxUploadBytes, declared) : ctx.config.maxUploadBytes;
    const staged = await ctx.files.stage(source, atMost, fileTooLarge, undefined, later);
    if (file.file.truncated) {
      await ctx.files.discard([staged]);
      throw fileTooLarge();
    }
    out.push({ field: file.fieldname, filename: file.filename || undefined, declaredType: file.mimetype, staged });
  }
}

/**
 * POST /base/: direct upload (wire-reference §1.4). File parts are streamed to durable storage as
 * they arrive (the SDK sends the file before the public key field), then the project, store choice,
 * metadata and credentials are checked, and only then rows are committed. On any failure the staged
 * bytes are discarded, so nothing half-done stays behind.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { MultipartFile } from '@fastify/multipart';
import type { AppContext } from '../context.js';
import { apiInitiator } from '../core/events.js';
import type { StagedBlob } from './service.js';
import { isAppError } from '../core/errors.js';
import { authorizeUpload } from '../http/upload/credentials.js';
import { uploadError } from '../http/upload/errors.js';
import { MAX_FILES_PER_REQUEST } from '../http/upload/limits.js';
import { sendJson } from '../http/common/json.js';
import { checkNoNulls, metadataFields, queryParams, requireProject, storeChoice, type Params } from '../http/upload/params.js';

interface StagedPart {
  field: string;
  filename: string | undefined;
  /** The part's Content-Type (busboy reports a missing one as text/plain, as RFC 7578 says). */
  declaredType: string;
  staged: StagedBlob;
}


const tooLarge = () => uploadError(400, 'FileSizeLimitExceededError', 'File is too large.');

export function baseRoute(ctx: AppContext) {
  return async function plugin(app: FastifyInstance): Promise<void> {
    app.post('/base/', async (req, reply) => {
      if (!req.isMultipart()) throw uploadError(400, 'FilesRequiredError', 'Request does not contain files.');
      const params = queryParams(req.query);
      const parts: StagedPart[] = [];
      try {
        await readParts(ctx, req, params, parts);
        checkNoNulls(params);
        if (parts.length === 0) throw uploadError(400, 'FilesRequiredError', 'Request does not contain files.');
        const found = await requireProject(ctx, params, 'base');
        const store = storeChoice(ctx, params);
        const metadata = metadataFields(params);
        const spend = await authorizeUpload(ctx, req, found, params, '/base/', parts.length);
        const out: Record<string, string> = {};
        try {
          for (const part of parts) {
            const file = await ctx.files.commit(found.project, part.staged, { originalFilename: part.filename, declaredType: part.declaredType, store, metadata, initiator: apiInitiator(req.id) });
            out[part.field] = file.uuid;
          }
        } catch (err) {
          if (isAppError(err) && err.status < 500) await spend.refund();
          throw err;
        }
        ctx.worker.poke();
        return sendJson(reply, 200, out);
      } catch (err) {
        await ctx.files.discard(parts.map((p) => p.staged));
        throw mapMultipartError(err);
      }
    });
  };
}

async function readParts(ctx: AppContext, req: FastifyRequest, params: Params, out: StagedPart[]): Promise<void> {
  for await (const part of req.parts()) {
    if (part.type === 'field') {
      if (typeof part.value === 'string') params.set(part.fieldname, part.value);
      continue;
    }
    const file = part as MultipartFile;
    if (out.length >= MAX_FILES_PER_REQUEST) throw uploadError(400, 'RequestFileNumberLimitExceededError', 'The request contains too many files.');
    const staged = await ctx.files.stage(file.file, ctx.config.maxUploadBytes, tooLarge);
    if (file.file.truncated) {
      await ctx.files.discard([staged]);
      throw tooLarge();
    }
    out.push({ field: file.fieldname, filename: file.filename || undefined, declaredType: file.mimetype, staged });
  }
}

/** @fastify/multipart and busboy errors mapped to the wire's codes. */
export function mapMultipartError(err: unknown): unknown {
  if (isAppError(err)) return err;
  const code = (err as { code?: string }).code;
  switch (code) {
    case 'FST_REQ_FILE_TOO_LARGE':
      return tooLarge();
    case 'FST_FILES_LIMIT':
      return uploadError(400, 'RequestFileNumberLimitExceededError', 'The request contains too many files.');
    case 'FST_FIELDS_LIMIT':
    case 'FST_PARTS_LIMIT':
      return uploadError(400, 'RequestFiledsNumberLimitExceededError', 'The request contains too many HTTP POST fields.');
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
    case 'FST_PROTO_VIOLATION':
      return uploadError(400, 'PostRequestParserFailedError', 'HTTP POST request parsing failed.');
    default:
      // busboy refuses a boundary longer than its search needle (about 254 characters) at construction.
      if (err instanceof Error && /unexpected end|terminated early|malformed part header|boundary not found|multipart|needle cannot have a length/i.test(err.message)) {
        return uploadError(400, 'PostRequestParserFailedError', 'HTTP POST request parsing failed.');
      }
      return err;
  }
}

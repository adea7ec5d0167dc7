/**
 * PUT of one multipart part to the URL handed out by /multipart/start/ (signed, expiring). The raw
 * body streams straight into the part store: any order, concurrently, a retry overwrites. Answers
 * exactly 200 with an ETag, as browsers' XHR and S3-minded clients expect (wire-reference trap 4);
 * the ETag is not the part's MD5 (partEtag says why).
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import { checked, uuidText } from '../http/common/route.js';
import { uploadRoute } from '../http/upload/route.js';
import { notFound, type MultipartService } from './multipart/service.js';
import { uploadErrors } from '../core/error-catalogue/upload.js';

// The URL's signature is the credential: no public key. Checked by the handler (404 / 403 order).
const PART_SPEC = {
  method: 'PUT',
  url: '/multipart/upload/:uuid/:part/',
  summary: 'Upload one part of a multipart upload',
  description: 'The pre-signed URL `/multipart/start/` answered (object storage may hand out its own instead).',
  security: [],
  // A path naming no upload or part is a 404 before the signature is looked at.
  params: z.object({
    uuid: uuidText(notFound, 'The upload.'),
    part: checked(z.string(), (v) => {
      const part = /^\d{1,5}$/.test(v) ? Number(v) : 0;
      if (part < 1) throw notFound();
      return part;
    }).meta({ type: 'string', pattern: '^[0-9]{1,5}$', description: 'Part number, from 1.' }),
  }),
  // Absent or empty values fail the signature check below (403), never a 400.
  query: z.object({ expires: z.string().default('').meta({ description: 'From the URL.' }), sig: z.string().default('').meta({ description: 'From the URL.' }) }),
  body: { schema: z.string().meta({ format: 'binary', description: 'The part\'s bytes: exactly part_size (the last: the rest).' }), contentTypes: ['application/octet-stream'], documentOnly: true },
  responses: { 200: { description: 'Stored (ETag: derived from the upload, part number and size; not the part\'s MD5).' }, 404: { description: 'No such upload or part.' }, 413: { description: 'Larger than part_size.' } },
} as const;

const partTooLarge = uploadErrors.requestTooLarge;

export function multipartPartRoute(_ctx: AppContext, service: MultipartService) {
  return async function plugin(app: FastifyInstance): Promise<void> {
    if (!service.store.acceptsParts) return;
    // Whatever the part's Content-Type (the JS SDK sends the file's own type, even JSON or a form
    // type), the body is never parsed or size-limited by Fastify here: it is streamed below.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', (_req, payload, done) => done(null, payload));

    uploadRoute(app, PART_SPEC, async (req, reply, { params, query }) => {
      const { uuid, part } = params;
      const ok = await service.store.verifyPartUrl(uuid, part, query.expires, query.sig);
      if (!ok) throw uploadErrors.partSignatureInvalid();
      const upload = await service.openUpload(uuid);
      if (part > Number(upload.parts)) throw notFound();
      // Every part but the last is exactly part_size; nothing larger is ever accepted.
      const max = Number(upload.part_size);
      const declared = Number(req.headers['content-length']);
      if (Number.isFinite(declared) && declared > max) throw partTooLarge();
      // The store leaves the request whole when it fails mid-body (MultipartStore.writePart).
      const put = await service.store.writePart({ uuid, part, partSize: max, size: Number(upload.size) }, req.raw, {
        onTooLarge: partTooLarge,
        beforeWrite: () => service.ensureAcceptingParts(uuid),
      });
      return reply.code(200).header('etag', `"${put.etag}"`).send();
    });
  };
}

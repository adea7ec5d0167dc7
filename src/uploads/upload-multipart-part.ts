/**
 * PUT of one multipart part to the URL handed out by /multipart/start/ (signed, expiring). The raw
 * body streams straight into the part store: any order, concurrently, a retry overwrites. Answers
 * exactly 200 with an ETag, as browsers' XHR and S3-minded clients expect (wire-reference trap 4).
 */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import { parseUuid } from '../core/ids.js';
import { uploadError } from '../http/upload/errors.js';
import { notFound, type MultipartService } from './multipart/service.js';

interface PartParams {
  uuid: string;
  part: string;
}

const partTooLarge = () => uploadError(413, 'RequestSizeLimitExceededError', 'The size of the request is too large.');

export function multipartPartRoute(_ctx: AppContext, service: MultipartService) {
  return async function plugin(app: FastifyInstance): Promise<void> {
    if (!service.store.acceptsParts) return;
    // Whatever the part's Content-Type (the JS SDK sends the file's own type, even JSON or a form
    // type), the body is never parsed or size-limited by Fastify here: it is streamed below.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', (_req, payload, done) => done(null, payload));

    app.put<{ Params: PartParams; Querystring: Record<string, string | undefined> }>('/multipart/upload/:uuid/:part/', async (req, reply) => {
      const uuid = parseUuid(req.params.uuid);
      const part = /^\d{1,5}$/.test(req.params.part) ? Number(req.params.part) : 0;
      if (!uuid || part < 1) throw notFound();
      const ok = await service.store.verifyPartUrl(uuid, part, String(req.query['expires'] ?? ''), String(req.query['sig'] ?? ''));
      if (!ok) throw uploadError(403, 'SignatureInvalidError', 'Invalid or expired part URL signature.');
      const upload = await service.openUpload(uuid);
      if (part > Number(upload.parts)) throw notFound();
      // Every part but the last is exactly part_size; nothing larger is ever accepted.
      const max = Number(upload.part_size);
      const declared = Number(req.headers['content-length']);
      if (Number.isFinite(declared) && declared > max) throw partTooLarge();
      const put = await service.store.writePart(uuid, part, req.raw, max, partTooLarge);
      return reply.code(200).header('etag', `"${put.md5}"`).send();
    });
  };
}

/** Object requests: PutObject, CopyObject, GetObject, HeadObject, DeleteObject. */
import type http from 'node:http';
import type { AppContext } from '../context.js';
import { validateMetadata } from '../core/metadata.js';
import { apiInitiator, type Initiator } from '../jobs/file-events.js';
import { requestIdOf } from '../http/common/request-id.js';
import { s3Error } from '../http/s3/errors.js';
import type { Caller } from './auth.js';
import { entityTooLarge, objectBody } from './body.js';
import { sendObject } from './read.js';
import { checkKey, type S3Request } from './request.js';
import type { ObjectService } from './service.js';
import { doc, el, sendXml } from './xml.js';

/** S3's largest single PUT. */
export const MAX_PUT_BYTES = 5 * 1024 ** 3;

/** `x-amz-meta-<name>` headers as file metadata (the metadata limits apply: a 400 past them). */
export function metadataOf(headers: http.IncomingHttpHeaders): Record<string, string> {
  const entries: Array<[string, string]> = [];
  for (const [name, value] of Object.entries(headers)) {
    if (name.startsWith('x-amz-meta-') && value !== undefined) entries.push([name.slice('x-amz-meta-'.length), decodeMetaValue(Array.isArray(value) ? value.join(',') : value)]);
  }
  return validateMetadata(entries);
}

/** RFC 2047 `=?UTF-8?B?…?=` values (how S3 clients send non-ASCII metadata) decoded. */
function decodeMetaValue(value: string): string {
  const m = /^=\?UTF-8\?([BQ])\?(.*)\?=$/i.exec(value.trim());
  if (!m) return value;
  if (m[1]?.toUpperCase() === 'B') return Buffer.from(m[2] ?? '', 'base64').toString('utf8');
  return decodeURIComponent((m[2] ?? '').replace(/_/g, ' ').replace(/=([0-9A-F]{2})/gi, '%$1'));
}

export const initiatorOf = (r: S3Request): Initiator => {
  return apiInitiator(requestIdOf(r.res) ?? null);
};

export async function putObject(ctx: AppContext, service: ObjectService, r: S3Request, caller: Caller, key: string): Promise<void> {
  const metadata = metadataOf(r.req.headers);
  const max = Math.min(ctx.config.maxUploadBytes, MAX_PUT_BYTES);
  const body = objectBody(r, caller, max);
  const contentType = typeof r.req.headers['content-type'] === 'string' ? r.req.headers['content-type'] : null;
  const file = await service.put(caller.project, body.source, max, entityTooLarge, { key, contentType, metadata, initiator: initiatorOf(r) }, (put) => body.verify(put));
  r.res.writeHead(200, { etag: `"${file.md5}"`, 'content-length': 0 }).end();
}

/** CopyObject: a new file under `key` with the source's bytes; its metadata copied or replaced (x-amz-metadata-directive). */
export async function copyObject(ctx: AppContext, service: ObjectService, r: S3Request, caller: Caller, key: string, source: string): Promise<void> {
  const from = copySourceKey(source, caller.project.pubKey);
  const src = await service.get(caller.project.id, from);
  const directive = String(r.req.headers['x-amz-metadata-directive'] ?? 'COPY').toUpperCase();
  if (directive !== 'COPY' && directive !== 'REPLACE') throw s3Error(400, 'InvalidArgument', 'Unknown metadata directive.');
  const replace = directive === 'REPLACE';
  const contentType = replace ? (typeof r.req.headers['content-type'] === 'string' ? r.req.headers['content-type'] : null) : src.contentType;
  const metadata = replace ? metadataOf(r.req.headers) : src.metadata;
  const max = Math.min(ctx.config.maxUploadBytes, MAX_PUT_BYTES);
  const bytes = await service.read(src);
  const file = await service.put(caller.project, bytes, max, entityTooLarge, { key, contentType, metadata, initiator: initiatorOf(r) }, () => undefined);
  const modified = new Date(Math.floor(file.uploadedUs / 1000)).toISOString();
  sendXml(r.res, 200, doc('CopyObjectResult', el('LastModified', modified) + el('ETag', `"${file.md5}"`)));
}

/** `x-amz-copy-source`: `[/]<bucket>/<key>`, percent-encoded; only this project's bucket. */
export function copySourceKey(source: string, bucket: string): string {
  let text: string;
  try {
    text = decodeURIComponent(source.split('?')[0] ?? '');
  } catch {
    throw s3Error(400, 'InvalidArgument', 'Copy Source must mention the source bucket and key: sourcebucket/sourcekey.');
  }
  text = text.replace(/^\//, '');
  const slash = text.indexOf('/');
  if (slash <= 0 || slash === text.length - 1) throw s3Error(400, 'InvalidArgument', 'Copy Source must mention the source bucket and key: sourcebucket/sourcekey.');
  if (text.slice(0, slash) !== bucket) throw s3Error(403, 'AccessDenied', 'Objects can only be copied within the project\'s own bucket.');
  const key = text.slice(slash + 1);
  checkKey(key);
  return key;
}

/** GetObject and HeadObject; without a promise for an object this node holds in memory (row and bytes). */
export function getObject(ctx: AppContext, service: ObjectService, r: S3Request, caller: Caller, key: string): Promise<void> | undefined {
  const held = service.cached(caller.project.id, key);
  if (held !== undefined) return sendObject(r, held, ctx.blobs, service.readOriginal);
  return service.get(caller.project.id, key).then((o) => sendObject(r, o, ctx.blobs, service.readOriginal));
}

export async function deleteObject(service: ObjectService, r: S3Request, caller: Caller, key: string): Promise<void> {
  await service.delete(caller.project.id, key, initiatorOf(r));
  r.res.writeHead(204).end();
}

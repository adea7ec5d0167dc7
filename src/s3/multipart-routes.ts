/**
 * Multipart requests of the S3 surface: CreateMultipartUpload (`POST ?uploads`), UploadPart
 * (`PUT ?partNumber&uploadId`), UploadPartCopy (the same with `x-amz-copy-source`),
 * CompleteMultipartUpload (`POST ?uploadId`), AbortMultipartUpload (`DELETE ?uploadId`), ListParts
 * (`GET ?uploadId`) and ListMultipartUploads (`GET /<bucket>?uploads`).
 */
import type http from 'node:http';
import { BlobNotFound } from '../blobs/store.js';
import { escapeXml, s3Error } from '../http/s3/errors.js';
import type { AppError } from '../core/errors.js';
import { isAppError } from '../core/errors.js';
import type { Caller } from './auth.js';
import { objectBody } from './body.js';
import { copySourceBody } from './multipart/part-copy.js';
import type { ObjectService } from './service.js';
import { initiatorOf, metadataOf } from './objects.js';
import type { S3Request } from './request.js';
import { MAX_PART_BYTES, MAX_PARTS, noSuchUpload, type S3Multipart } from './multipart/service.js';
import { child, childrenNamed, doc, el, readXmlBody, requireRoot, sendXml } from './xml.js';

export interface MultipartHandlers {
  /** ListMultipartUploads (`GET /<bucket>?uploads`): its answer, or null when `r` is another request. */
  bucket(r: S3Request, caller: Caller, label: (op: string) => void): Promise<void> | null;
  /** Create, UploadPart, Complete, Abort, ListParts on `key`: the answer, or null for another request. */
  object(r: S3Request, caller: Caller, key: string, label: (op: string) => void): Promise<void> | null;
}

/** A long completion sends its 200 early and then a space every so often, as S3 does, so clients keep waiting. */
const KEEPALIVE_MS = 10_000;

export function multipartHandlers(mp: S3Multipart, objects: ObjectService): MultipartHandlers {
  return {
    bucket(r, caller, label) {
      if (r.method !== 'GET' || !r.query.has('uploads')) return null;
      label('ListMultipartUploads');
      return listUploads(mp, r, caller);
    },
    object(r, caller, key, label) {
      const q = r.query;
      const uploadId = q.get('uploadId');
      if (r.method === 'POST' && q.has('uploads')) {
        label('CreateMultipartUpload');
        return create(mp, r, caller, key);
      }
      if (uploadId === null) return null;
      switch (r.method) {
        case 'PUT':
          if (r.req.headers['x-amz-copy-source'] !== undefined) {
            label('UploadPartCopy');
            return uploadPartCopy(mp, objects, r, caller, key, uploadId);
          }
          label('UploadPart');
          return uploadPart(mp, r, caller, key, uploadId);
        case 'POST':
          label('CompleteMultipartUpload');
          return complete(mp, r, caller, key, uploadId);
        case 'DELETE':
          label('AbortMultipartUpload');
          return abort(mp, r, caller, key, uploadId);
        case 'GET':
          label('ListParts');
          return listParts(mp, r, caller, key, uploadId);
        default:
          return null;
      }
    },
  };
}

async function create(mp: S3Multipart, r: S3Request, caller: Caller, key: string): Promise<void> {
  const contentType = typeof r.req.headers['content-type'] === 'string' ? r.req.headers['content-type'] : null;
  const uploadId = await mp.create(caller.project, key, contentType, metadataOf(r.req.headers));
  sendXml(r.res, 200, doc('InitiateMultipartUploadResult', el('Bucket', r.bucket) + el('Key', key) + el('UploadId', uploadId)));
}

function partNumberOf(r: S3Request): number {
  const text = r.query.get('partNumber') ?? '';
  const partNumber = /^\d{1,5}$/.test(text) ? Number(text) : 0;
  if (partNumber < 1 || partNumber > MAX_PARTS) throw s3Error(400, 'InvalidArgument', `Part number must be an integer between 1 and ${MAX_PARTS}, inclusive`);
  return partNumber;
}

async function uploadPart(mp: S3Multipart, r: S3Request, caller: Caller, key: string, uploadId: string): Promise<void> {
  const partNumber = partNumberOf(r);
  const upload = await mp.open(caller.project.id, key, uploadId);
  const md5 = await mp.uploadPart(upload, partNumber, objectBody(r, caller, MAX_PART_BYTES));
  r.res.writeHead(200, { etag: `"${md5}"`, 'content-length': 0 }).end();
}

async function uploadPartCopy(mp: S3Multipart, objects: ObjectService, r: S3Request, caller: Caller, key: string, uploadId: string): Promise<void> {
  const partNumber = partNumberOf(r);
  const upload = await mp.open(caller.project.id, key, uploadId);
  const body = await copySourceBody(objects, r, caller.project.pubKey, caller.project.id, MAX_PART_BYTES);
  const md5 = await mp.uploadPart(upload, partNumber, body);
  sendXml(r.res, 200, doc('CopyPartResult', el('LastModified', new Date().toISOString()) + el('ETag', `"${md5}"`)));
}

async function complete(mp: S3Multipart, r: S3Request, caller: Caller, key: string, uploadId: string): Promise<void> {
  const upload = await mp.open(caller.project.id, key, uploadId);
  const root = requireRoot(await readXmlBody(r.req, 2 * 1024 * 1024), 'CompleteMultipartUpload');
  const chosen = childrenNamed(root, 'Part').map((p) => ({ partNumber: Number(child(p, 'PartNumber')?.text.trim()), etag: child(p, 'ETag')?.text ?? '' }));
  if (chosen.some((c) => !Number.isInteger(c.partNumber))) throw s3Error(400, 'MalformedXML', 'The XML you provided was not well-formed or did not validate against our published schema.');
  await answerSlowly(r.res, async () => {
    try {
      const { etag } = await mp.complete(caller.project, upload, chosen, initiatorOf(r));
      return el('Location', `/${r.bucket}/${key}`) + el('Bucket', r.bucket) + el('Key', key) + el('ETag', `"${etag}"`);
    } catch (err) {
      // A part removed under the completion (an abort at the same time): the upload is gone.
      throw err instanceof BlobNotFound ? noSuchUpload() : err;
    }
  });
}

/**
 * Answers CompleteMultipartUpload: at once when the work is quick; else the 200 and the XML
 * declaration go out first, spaces follow while the parts are assembled, and the result (or S3's
 * error document, which the clients look for in a 200 to this request) ends the body.
 */
async function answerSlowly(res: http.ServerResponse, work: () => Promise<string>): Promise<void> {
  let started = false;
  const timer = setInterval(() => {
    if (!started) {
      started = true;
      res.writeHead(200, { 'content-type': 'application/xml' });
      res.write('<?xml version="1.0" encoding="UTF-8"?>\n');
    }
    res.write(' ');
  }, KEEPALIVE_MS);
  try {
    const body = await work();
    if (!started) return sendXml(res, 200, doc('CompleteMultipartUploadResult', body));
    res.end(doc('CompleteMultipartUploadResult', body).replace(/^<\?xml[^>]*>\n/, ''));
  } catch (err) {
    if (!started) throw err;
    const e = isAppError(err) ? (err as AppError) : null;
    res.end(`<Error><Code>${e ? e.code : 'InternalError'}</Code><Message>${escapeXml(e ? e.message : 'We encountered an internal error. Please try again.')}</Message></Error>`);
  } finally {
    clearInterval(timer);
  }
}

async function abort(mp: S3Multipart, r: S3Request, caller: Caller, key: string, uploadId: string): Promise<void> {
  await mp.open(caller.project.id, key, uploadId);
  await mp.forget(uploadId);
  r.res.writeHead(204).end();
}

async function listParts(mp: S3Multipart, r: S3Request, caller: Caller, key: string, uploadId: string): Promise<void> {
  await mp.open(caller.project.id, key, uploadId);
  const max = Math.min(Number(r.query.get('max-parts') ?? 1000) || 1000, 1000);
  const marker = Number(r.query.get('part-number-marker') ?? 0) || 0;
  const parts = await mp.repo.parts(uploadId, marker, max + 1);
  const page = parts.slice(0, max);
  const truncated = parts.length > max;
  const body =
    el('Bucket', r.bucket) +
    el('Key', key) +
    el('UploadId', uploadId) +
    el('PartNumberMarker', marker) +
    (truncated ? el('NextPartNumberMarker', page[page.length - 1]?.part_number ?? marker) : '') +
    el('MaxParts', max) +
    el('IsTruncated', truncated) +
    el('StorageClass', 'STANDARD') +
    page
      .map((p) => `<Part>${el('PartNumber', p.part_number)}${el('LastModified', new Date(Math.floor(Number(p.uploaded_us) / 1000)).toISOString())}${el('ETag', `"${p.md5}"`)}${el('Size', Number(p.size))}</Part>`)
      .join('');
  sendXml(r.res, 200, doc('ListPartsResult', body));
}

async function listUploads(mp: S3Multipart, r: S3Request, caller: Caller): Promise<void> {
  const prefix = r.query.get('prefix') ?? '';
  const keyMarker = r.query.get('key-marker') ?? '';
  const idMarker = r.query.get('upload-id-marker') ?? '';
  const max = Math.min(Number(r.query.get('max-uploads') ?? 1000) || 1000, 1000);
  const rows = (await mp.repo.list(caller.project.id, prefix, keyMarker, keyMarker === '' ? '' : idMarker, max + 1)).filter((u) => u.object_key.startsWith(prefix));
  const page = rows.slice(0, max);
  const truncated = rows.length > max;
  const last = page[page.length - 1];
  const body =
    el('Bucket', r.bucket) +
    el('KeyMarker', keyMarker) +
    el('UploadIdMarker', idMarker) +
    (truncated && last ? el('NextKeyMarker', last.object_key) + el('NextUploadIdMarker', last.upload_id) : '') +
    el('Prefix', prefix) +
    el('MaxUploads', max) +
    el('IsTruncated', truncated) +
    page.map((u) => `<Upload>${el('Key', u.object_key)}${el('UploadId', u.upload_id)}${el('Initiated', new Date(Math.floor(Number(u.created_us) / 1000)).toISOString())}${el('StorageClass', 'STANDARD')}</Upload>`).join('');
  sendXml(r.res, 200, doc('ListMultipartUploadsResult', body));
}

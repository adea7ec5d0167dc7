/**
 * Service and bucket requests. Each project has one bucket, named by its public key: ListBuckets
 * shows it, HeadBucket and GetBucketLocation answer for it, and buckets are neither created nor
 * deleted over S3 (a project is made with `stowage project create`).
 */
import { escapeXml, s3Error } from '../http/s3/errors.js';
import type { Caller } from './auth.js';
import { listObjectsV1, listObjectsV2 } from './listing.js';
import { initiatorOf } from './objects.js';
import type { S3Request } from './request.js';
import type { S3Query } from './query.js';
import type { ObjectService } from './service.js';
import { child, childrenNamed, doc, el, readXmlBody, requireRoot, sendXml, malformedXml } from './xml.js';

/** S3's bound on the keys of one DeleteObjects request. */
const MAX_DELETE_KEYS = 1000;

const iso = (us: number): string => new Date(Math.floor(us / 1000)).toISOString();

export function listBuckets(r: S3Request, caller: Caller): void {
  const p = caller.project;
  const owner = `<Owner>${el('ID', p.pubKey)}${el('DisplayName', p.name)}</Owner>`;
  sendXml(r.res, 200, doc('ListAllMyBucketsResult', `${owner}<Buckets><Bucket>${el('Name', p.pubKey)}${el('CreationDate', iso(p.createdUs))}</Bucket></Buckets>`));
}

export async function bucketRequest(r: S3Request, caller: Caller, service: ObjectService): Promise<void> {
  const q = r.query;
  switch (r.method) {
    case 'HEAD':
      r.res.writeHead(200, { 'x-amz-bucket-region': caller.signed.region }).end();
      return;
    case 'GET':
      // The region the client signed for: s3cmd and others sign their next requests with it.
      if (q.has('location')) return sendXml(r.res, 200, doc('LocationConstraint', escapeXml(caller.signed.region === 'us-east-1' ? '' : caller.signed.region)));
      if (q.has('versioning')) return sendXml(r.res, 200, doc('VersioningConfiguration', ''));
      if (q.get('list-type') === '2') return listObjectsV2(r, service, caller.project.id);
      if (subresource(q) !== null) throw notImplemented(subresource(q) as string);
      return listObjectsV1(r, service, caller.project.id);
    case 'PUT':
      if (subresource(q) !== null) throw notImplemented(subresource(q) as string);
      throw s3Error(409, 'BucketAlreadyOwnedByYou', 'Your previous request to create the named bucket succeeded and you already own it.');
    case 'DELETE':
      throw s3Error(403, 'AccessDenied', 'A project\'s bucket cannot be deleted over S3.');
    case 'POST':
      if (q.has('delete')) return deleteObjects(r, caller, service);
      throw notImplemented('POST');
    default:
      throw s3Error(405, 'MethodNotAllowed', 'The specified method is not allowed against this resource.');
  }
}

/** A bucket that is not the caller's: creating it is refused, anything else names no bucket. */
export function otherBucket(r: S3Request): never {
  if (r.method === 'PUT' && r.key === null) throw s3Error(403, 'AccessDenied', 'Buckets cannot be created over S3: each project has one bucket, named by its public key.');
  throw s3Error(404, 'NoSuchBucket', 'The specified bucket does not exist');
}

const LIST_PARAMS = new Set(['list-type', 'prefix', 'delimiter', 'max-keys', 'marker', 'continuation-token', 'start-after', 'fetch-owner', 'encoding-type', 'x-id']);

/** A sub-resource (`?acl`, `?policy`, …) this surface does not serve, or null. */
function subresource(q: S3Query): string | null {
  for (const name of q.keys()) if (!LIST_PARAMS.has(name) && !name.startsWith('X-Amz-')) return name;
  return null;
}

const notImplemented = (what: string) => s3Error(501, 'NotImplemented', `A header or query you provided implies functionality that is not implemented: ${what}`);

async function deleteObjects(r: S3Request, caller: Caller, service: ObjectService): Promise<void> {
  const root = requireRoot(await readXmlBody(r.req, 2 * 1024 * 1024), 'Delete');
  const quiet = child(root, 'Quiet')?.text.trim() === 'true';
  const keys = childrenNamed(root, 'Object').map((o) => child(o, 'Key')?.text);
  if (keys.length === 0 || keys.length > MAX_DELETE_KEYS || keys.some((k) => k === undefined || k === '')) throw malformedXml();
  await service.deleteMany(caller.project.id, keys as string[], initiatorOf(r));
  const deleted = quiet ? '' : (keys as string[]).map((k) => `<Deleted>${el('Key', k)}</Deleted>`).join('');
  sendXml(r.res, 200, doc('DeleteResult', deleted));
}

/**
 * Every request of the S3 surface: parsed (request.ts), authenticated (auth.ts), then dispatched by
 * method and sub-resource to the module answering it. The route label of the node's metrics is
 * the S3 operation's name.
 */
import type http from 'node:http';
import type { AppContext } from '../context.js';
import type { S3Handler } from '../feature.js';
import { proxyMatcher } from '../http/common/trust.js';
import { s3Error } from '../http/s3/errors.js';
import { S3Auth, type Caller } from './auth.js';
import { bucketRequest, listBuckets, otherBucket } from './bucket.js';
import { copyObject, deleteObject, getObject, putObject } from './objects.js';
import { parseRequest, type S3Request } from './request.js';
import type { ObjectService } from './service.js';
import type { MultipartHandlers } from './multipart-routes.js';

export function s3Handler(ctx: AppContext, service: ObjectService, multipart: MultipartHandlers): S3Handler {
  const auth = new S3Auth(ctx);
  const trusted = proxyMatcher(ctx.config.trustedProxies);
  const clientAddress = (req: http.IncomingMessage): string => {
    const peer = req.socket.remoteAddress ?? '';
    const forwarded = req.headers['x-forwarded-for'];
    // Behind a trusted proxy the client is the address it appended last.
    return trusted(peer) && typeof forwarded === 'string' ? (forwarded.split(',').pop()?.trim() ?? peer) : peer;
  };
  const route = (r: S3Request, caller: Caller): Promise<void> | undefined => {
    const label = (op: string) => ctx.metrics.routeLabel(r.res, op);
    if (r.bucket === '') {
      if (r.method !== 'GET') throw s3Error(405, 'MethodNotAllowed', 'The specified method is not allowed against this resource.');
      label('ListBuckets');
      return void listBuckets(r, caller);
    }
    if (r.bucket !== caller.project.pubKey) return otherBucket(r);
    if (r.key === null) {
      const listing = multipart.bucket(r, caller, label);
      if (listing) return listing;
      label(bucketOperation(r));
      return bucketRequest(r, caller, service);
    }
    return objectRequest(ctx, service, multipart, r, caller, r.key, label);
  };
  // Without a promise as far as each step can go: a presigned GET of a small object this node
  // holds (keys, row, bytes) is answered at once (docs/performance.md: a promise per step costs).
  return (req, res) => {
    const r = parseRequest(req, res);
    const caller = auth.authenticate(r, clientAddress(req));
    return caller instanceof Promise ? caller.then((c) => route(r, c)) : route(r, caller);
  };
}

function bucketOperation(r: S3Request): string {
  if (r.method === 'GET') return r.query.get('list-type') === '2' ? 'ListObjectsV2' : r.query.has('location') ? 'GetBucketLocation' : 'ListObjects';
  if (r.method === 'POST') return 'DeleteObjects';
  return `${r.method}Bucket`;
}

function objectRequest(ctx: AppContext, service: ObjectService, multipart: MultipartHandlers, r: S3Request, caller: Caller, key: string, label: (op: string) => void): Promise<void> | undefined {
  const handled = multipart.object(r, caller, key, label);
  if (handled) return handled;
  const source = r.req.headers['x-amz-copy-source'];
  switch (r.method) {
    case 'PUT':
      if (r.query.has('tagging') || r.query.has('acl')) throw s3Error(501, 'NotImplemented', 'Object tagging and ACLs are not implemented.');
      if (typeof source === 'string') {
        label('CopyObject');
        return copyObject(ctx, service, r, caller, key, source);
      }
      label('PutObject');
      return putObject(ctx, service, r, caller, key);
    case 'GET':
    case 'HEAD':
      if (r.query.has('tagging') || r.query.has('acl')) throw s3Error(501, 'NotImplemented', 'Object tagging and ACLs are not implemented.');
      if (r.query.has('partNumber')) throw s3Error(501, 'NotImplemented', 'Reading an object by part number is not implemented.');
      label(r.method === 'GET' ? 'GetObject' : 'HeadObject');
      return getObject(ctx, service, r, caller, key);
    case 'DELETE':
      label('DeleteObject');
      return deleteObject(service, r, caller, key);
    default:
      throw s3Error(405, 'MethodNotAllowed', 'The specified method is not allowed against this resource.');
  }
}

/** The S3-compatible surface over a project's files (docs/s3.md): one handler for every request of the `s3` surface. */
import type { AppContext } from '../context.js';
import type { Feature, ReadOriginal } from '../feature.js';
import { s3Handler } from './handler.js';
import { multipartHandlers } from './multipart-routes.js';
import { PARTS_PREFIX, S3_MULTIPART_EXPIRE_JOB, S3Multipart } from './multipart/service.js';
import { ObjectService } from './service.js';

/** `readOriginal`: the delivery feature's originals cache, which GetObject reads small objects through. */
export function s3Feature(ctx: AppContext, deps: { readOriginal: ReadOriginal }): Feature {
  const service = new ObjectService(ctx, deps.readOriginal);
  const multipart = new S3Multipart(ctx, service);
  return {
    name: 's3',
    s3: s3Handler(ctx, service, multipartHandlers(multipart, service)),
    jobs: {
      [S3_MULTIPART_EXPIRE_JOB]: { run: (p) => multipart.forget(p.uploadId) },
    },
    blobOwners: [
      { prefix: PARTS_PREFIX, referenced: (keys) => multipart.referencedKeys(keys, PARTS_PREFIX) },
      // An upload's file under files/ (its uuid is the upload id) from the bucket's completion to its row.
      { prefix: 'files/', referenced: (keys) => multipart.referencedKeys(keys, 'files/') },
    ],
  };
}

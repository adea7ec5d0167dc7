/**
 * UploadPartCopy (`PUT ?partNumber&uploadId` with `x-amz-copy-source`): a part whose bytes are
 * those of an object of the project's bucket, or of a byte range of it (`x-amz-copy-source-range:
 * bytes=first-last`). The bytes are read from the blob store and written as any part's are.
 */
import { s3Error } from '../../http/s3/errors.js';
import type { ObjectBody } from '../body.js';
import { copySourceKey } from '../objects.js';
import type { S3Request } from '../request.js';
import type { ObjectService } from '../service.js';

const badRange = () =>
  s3Error(400, 'InvalidArgument', 'The x-amz-copy-source-range value must be of the form bytes=first-last where first and last are the zero-based offsets of the first and last bytes to copy');

/** The source object's bytes (the whole or the range asked for) as a part's body. */
export async function copySourceBody(service: ObjectService, r: S3Request, bucket: string, projectId: number, maxBytes: number): Promise<ObjectBody> {
  const src = await service.get(projectId, copySourceKey(String(r.req.headers['x-amz-copy-source']), bucket));
  const header = r.req.headers['x-amz-copy-source-range'];
  let range: { start: number; end: number } | undefined;
  if (header !== undefined) {
    const m = /^bytes=(\d{1,15})-(\d{1,15})$/.exec(String(header).trim());
    if (!m || Number(m[1]) > Number(m[2])) throw badRange();
    range = { start: Number(m[1]), end: Number(m[2]) };
    if (range.end >= src.size) throw s3Error(416, 'InvalidRange', 'The requested range is not satisfiable');
  }
  const length = range ? range.end - range.start + 1 : src.size;
  if (length > maxBytes) throw s3Error(400, 'InvalidRequest', 'The specified copy source is larger than the maximum allowable size for a copy source: 5368709120');
  // An empty range of an empty object: nothing to read.
  const source = await service.read(src, length === 0 ? undefined : range);
  return { source, length, verify: () => undefined };
}

/** The S3 suites' client: the AWS SDK for JavaScript v3 against a suite's S3 surface, path-style. */
import { S3Client } from '@aws-sdk/client-s3';
import type { ProjectKeys } from '../helpers/server.js';

/** Started with this, a suite's server also serves the S3 surface. */
export const S3_SERVER = { env: { STOWAGE_ONLY: 'rest,upload,cdn,s3' } } as const;

export function s3Client(endpoint: string, keys: ProjectKeys, region = 'us-east-1'): S3Client {
  return new S3Client({
    endpoint,
    region,
    forcePathStyle: true,
    credentials: { accessKeyId: keys.public_key, secretAccessKey: keys.secret_key },
    // A refusal is what the tests look at: no retries.
    maxAttempts: 1,
  });
}

/** The S3 error code of a rejected SDK call (fails the test when the call succeeded). */
export async function s3ErrorOf(call: Promise<unknown>): Promise<{ code: string; status: number | undefined }> {
  try {
    await call;
  } catch (err) {
    const e = err as { name?: string; Code?: string; $metadata?: { httpStatusCode?: number } };
    return { code: e.Code ?? e.name ?? 'unknown', status: e.$metadata?.httpStatusCode };
  }
  throw new Error('expected the S3 call to fail');
}

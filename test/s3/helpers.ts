/**
 * The S3 suites' client: the AWS SDK for JavaScript v3 against a suite's S3 surface, path-style;
 * and requests signed by the SDK's own signer (@smithy/signature-v4) with any headers and payload
 * hash, to send what no client would.
 */
import crypto from 'node:crypto';
import { S3Client } from '@aws-sdk/client-s3';
import { SignatureV4 } from '@smithy/signature-v4';
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

/** The Hash the signer is built with, on node:crypto. */
class Sha256 {
  private readonly hash: crypto.Hash | crypto.Hmac;
  constructor(secret?: string | Uint8Array) {
    this.hash = secret === undefined ? crypto.createHash('sha256') : crypto.createHmac('sha256', secret);
  }
  update(data: string | Uint8Array): void {
    this.hash.update(data);
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
  reset(): void {}
}

export const sha256Hex = (data: string | Buffer) => crypto.createHash('sha256').update(data).digest('hex');

export function headerSigner(keys: ProjectKeys): SignatureV4 {
  return new SignatureV4({ service: 's3', region: 'us-east-1', sha256: Sha256, uriEscapePath: false, credentials: { accessKeyId: keys.public_key, secretAccessKey: keys.secret_key } });
}

/**
 * A request to `key` in the suite's bucket, signed in its headers; `headers` must hold the
 * x-amz-content-sha256 to sign. Answers the URL (with `query`) and the headers to send.
 */
export async function signedRequest(
  suite: { s3: string; keys: ProjectKeys },
  method: string,
  key: string,
  headers: Record<string, string>,
  o: { signingDate?: Date; query?: Record<string, string> } = {},
): Promise<{ url: string; headers: Record<string, string> }> {
  const url = new URL(`${suite.s3}/${suite.keys.public_key}/${key}`);
  const query = o.query ?? {};
  const req = await headerSigner(suite.keys).sign({ method, protocol: 'http:', hostname: url.hostname, port: Number(url.port), path: url.pathname, query, headers: { host: url.host, ...headers } }, { signingDate: o.signingDate ?? new Date() });
  url.search = new URLSearchParams(query).toString();
  return { url: url.toString(), headers: req.headers as Record<string, string> };
}

/**
 * A real S3-compatible endpoint for tests: s3rver on 127.0.0.1 with a free port and its own
 * directory. s3rver 3.7 lacks ListParts and AbortMultipartUpload; a small front middleware adds
 * both, reading s3rver's own upload directory (documented in docs/scale-out.md as the part of the
 * S3 surface the test endpoint only approximates).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';

const require = createRequire(import.meta.url);

export interface TestS3 {
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  directory: string;
  client: S3Client;
  createBucket(name?: string): Promise<string>;
  /** STOWAGE_S3_* environment for a server using `bucket`. */
  env(bucket: string): Record<string, string>;
  close(): Promise<void>;
}

interface KoaCtx {
  method: string;
  path: string;
  query: Record<string, string | undefined>;
  status: number;
  body: unknown;
  type: string;
}

interface S3rverInstance {
  middleware: Array<(ctx: KoaCtx, next: () => Promise<void>) => Promise<void>>;
  store: { getResourcePath(bucket: string, key: string | undefined, resource: string): string };
  run(): Promise<{ address: string; port: number }>;
  close(): Promise<void>;
}

export async function startS3(): Promise<TestS3> {
  const S3rver = require('s3rver') as new (opts: Record<string, unknown>) => S3rverInstance;
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-s3-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, resetOnClose: false, vhostBuckets: false });
  server.middleware.unshift(multipartShim(server));
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  const creds = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
  const client = new S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true, credentials: creds });
  return {
    endpoint,
    ...creds,
    directory,
    client,
    async createBucket(name = `b-${crypto.randomBytes(6).toString('hex')}`) {
      await client.send(new CreateBucketCommand({ Bucket: name }));
      return name;
    },
    env(bucket) {
      return {
        STOWAGE_S3_BUCKET: bucket,
        STOWAGE_S3_ENDPOINT: endpoint,
        STOWAGE_S3_REGION: 'us-east-1',
        STOWAGE_S3_ACCESS_KEY_ID: creds.accessKeyId,
        STOWAGE_S3_SECRET_ACCESS_KEY: creds.secretAccessKey,
        STOWAGE_S3_FORCE_PATH_STYLE: '1',
      };
    },
    async close() {
      client.destroy();
      await server.close();
      await fsp.rm(directory, { recursive: true, force: true });
    },
  };
}

const xmlEscape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** ListParts (GET ?uploadId) and AbortMultipartUpload (DELETE ?uploadId), which s3rver lacks. */
function multipartShim(server: S3rverInstance) {
  return async (ctx: KoaCtx, next: () => Promise<void>): Promise<void> => {
    const uploadId = ctx.query['uploadId'];
    const m = /^\/([^/]+)\/(.+)$/.exec(ctx.path);
    if (!uploadId || !m || !(ctx.method === 'GET' || ctx.method === 'DELETE')) return next();
    const [, bucket, key] = m as unknown as [string, string, string];
    if (!/^[0-9a-f]+$/.test(uploadId)) return next();
    const dir = path.join(server.store.getResourcePath(bucket, undefined, 'uploads'), uploadId);
    if (!fs.existsSync(dir)) {
      ctx.status = 404;
      ctx.type = 'application/xml';
      ctx.body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>NoSuchUpload</Code><Message>The specified upload does not exist.</Message></Error>`;
      return;
    }
    if (ctx.method === 'DELETE') {
      await fsp.rm(dir, { recursive: true, force: true });
      ctx.status = 204;
      ctx.body = '';
      return;
    }
    const numbers = (await fsp.readdir(dir)).filter((n) => /^\d+$/.test(n)).map(Number).sort((a, b) => a - b);
    const parts: string[] = [];
    for (const n of numbers) {
      const file = path.join(dir, String(n));
      const hash = crypto.createHash('md5');
      for await (const chunk of fs.createReadStream(file)) hash.update(chunk as Buffer);
      const size = (await fsp.stat(file)).size;
      parts.push(`<Part><PartNumber>${n}</PartNumber><ETag>"${hash.digest('hex')}"</ETag><Size>${size}</Size></Part>`);
    }
    ctx.status = 200;
    ctx.type = 'application/xml';
    ctx.body =
      `<?xml version="1.0" encoding="UTF-8"?>\n<ListPartsResult><Bucket>${xmlEscape(bucket)}</Bucket><Key>${xmlEscape(decodeURIComponent(key))}</Key>` +
      `<UploadId>${uploadId}</UploadId><IsTruncated>false</IsTruncated>${parts.join('')}</ListPartsResult>`;
  };
}

/** Picks the blob backend from the configuration: S3 when a bucket is set, else the data dir. */
import path from 'node:path';
import type { Config } from '../config.js';
import { FsBlobStore } from './fs-store.js';
import { sweepSpool } from './local-file.js';
import type { BlobStore } from './store.js';

export async function openBlobStore(config: Config): Promise<BlobStore> {
  if (config.s3Bucket) {
    const spoolDir = path.join(config.dataDir, 'spool');
    await sweepSpool(spoolDir, config.leftoversMinAgeMs);
    // Loaded only here: the AWS SDK costs a node on local disk about 10 MB of memory (docs/performance.md).
    const { S3BlobStore } = await import('./s3-store.js');
    return new S3BlobStore({
      bucket: config.s3Bucket,
      region: config.s3Region,
      endpoint: config.s3Endpoint,
      accessKeyId: config.s3AccessKeyId,
      secretAccessKey: config.s3SecretAccessKey,
      forcePathStyle: config.s3ForcePathStyle,
      publicEndpoint: config.s3PublicEndpoint,
      spoolDir,
    });
  }
  const blobs = new FsBlobStore(path.join(config.dataDir, 'blobs'));
  await blobs.sweepTemp(config.leftoversMinAgeMs);
  return blobs;
}

/**
 * Writes remote copies into a custom storage with the AWS S3 client. Storage endpoints are
 * operator configuration, yet every connection still passes the outbound address policy (the
 * SSRF guard of net/): a storage pointing at a private or loopback address works only when that
 * network is in STOWAGE_OUTBOUND_ALLOW. Hostnames are checked in the socket's own lookup, so the
 * checked address is the one connected to; IP literals are checked before the client is built.
 * The AWS SDK is loaded on first use: it is large, and most processes (CLI, CDN nodes) never need it.
 */
type S3Sdk = typeof import('@aws-sdk/client-s3');
type StorageSdk = typeof import('@aws-sdk/lib-storage');
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { Readable } from 'node:stream';
import type { ObjectCannedACL, S3Client } from '@aws-sdk/client-s3';
import { AppError } from '../../core/errors.js';
import { AddressPolicy, parseAddress, parseAllowList } from '../../net/address-policy.js';
import type { CustomStorage } from './repo.js';
import { restErrors } from '../../core/error-catalogue/rest.js';

const refused = restErrors.copyEndpointRefused;

function guardedLookup(policy: AddressPolicy): LookupFunction {
  return ((hostname: string, options: dns.LookupOptions, callback: (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void) => {
    dns.promises.lookup(hostname, { all: true, verbatim: true }).then(
      (addrs) => {
        if (addrs.length === 0 || !addrs.every((a) => policy.allows(a.address))) return callback(refused() as unknown as NodeJS.ErrnoException, '', 4);
        if (options.all) return callback(null, addrs);
        const first = addrs[0] as dns.LookupAddress;
        callback(null, first.address, first.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 4),
    );
  }) as LookupFunction;
}

export class StorageWriter {
  private readonly client: S3Client;

  static async open(storage: CustomStorage, allowCidrs: string[], timeoutMs = 10 * 60 * 1000): Promise<StorageWriter> {
    const [s3, lib] = await Promise.all([import('@aws-sdk/client-s3'), import('@aws-sdk/lib-storage')]);
    return new StorageWriter(s3, lib, storage, allowCidrs, timeoutMs);
  }

  private constructor(private readonly s3: S3Sdk, private readonly lib: StorageSdk, private readonly storage: CustomStorage, allowCidrs: string[], timeoutMs: number) {
    const policy = new AddressPolicy(parseAllowList(allowCidrs));
    if (storage.endpoint) {
      const literal = parseAddress(new URL(storage.endpoint).hostname);
      if (literal && !policy.allows(literal)) throw refused();
    }
    const lookup = guardedLookup(policy);
    this.client = new s3.S3Client({
      region: storage.region,
      ...(storage.endpoint ? { endpoint: storage.endpoint } : {}),
      forcePathStyle: storage.forcePathStyle,
      credentials: { accessKeyId: storage.accessKeyId, secretAccessKey: storage.secretAccessKey },
      requestHandler: { httpAgent: new http.Agent({ lookup, keepAlive: false }), httpsAgent: new https.Agent({ lookup, keepAlive: false }), requestTimeout: timeoutMs, connectionTimeout: 10_000 },
      maxAttempts: 3,
    });
  }

  async exists(key: string): Promise<boolean> {
    try {
      await this.client.send(new this.s3.HeadObjectCommand({ Bucket: this.storage.bucket, Key: key }));
      return true;
    } catch (err) {
      const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
      if (e.name === 'NotFound' || e.$metadata?.httpStatusCode === 404) return false;
      throw asStorageError(err);
    }
  }

  /** Streams `body` to the key (multipart for large bodies, 5 MiB parts, bounded memory). */
  async put(key: string, body: Readable, contentType: string, makePublic: boolean): Promise<void> {
    const acl: ObjectCannedACL = makePublic ? 'public-read' : 'private';
    const upload = new this.lib.Upload({
      client: this.client,
      params: { Bucket: this.storage.bucket, Key: key, Body: body, ContentType: contentType, ACL: acl },
      queueSize: 2,
      partSize: 5 * 1024 * 1024,
    });
    try {
      await upload.done();
    } catch (err) {
      throw asStorageError(err);
    }
  }

  close(): void {
    this.client.destroy();
  }
}

/** The storage refused the write or could not be reached: an upstream failure (502) naming the reason. */
function asStorageError(err: unknown): unknown {
  if (err instanceof AppError) return err;
  const e = err as { name?: string; message?: string; code?: string };
  return restErrors.copyStorageWriteFailed(`${e.name ?? e.code ?? 'error'}${e.message ? ` (${e.message.split('\n')[0]})` : ''}`);
}

/**
 * tus 1.0.0 on the wire (https://tus.io/protocols/resumable-upload): the headers this server
 * sends and reads, Upload-Metadata and Upload-Checksum parsing, and the protocol's errors. Pure.
 */
import crypto from 'node:crypto';
import { tusCatalogue } from '../core/error-catalogue/tus.js';

export const TUS_VERSION = '1.0.0';
export const TUS_EXTENSIONS = 'creation,creation-with-upload,termination,expiration,checksum';
export const CHECKSUM_ALGORITHMS = ['sha1', 'md5', 'sha256', 'sha512'] as const;
export type ChecksumAlgorithm = (typeof CHECKSUM_ALGORITHMS)[number];
export const CHUNK_CONTENT_TYPE = 'application/offset+octet-stream';
/** The response header naming the file a finished upload made (docs/tus.md). */
export const FILE_UUID_HEADER = 'stowage-file-uuid';

/** What browsers' tus clients must be able to read (and send) across origins. */
export const EXPOSED_HEADERS =
  'Location, Upload-Offset, Upload-Length, Upload-Metadata, Upload-Expires, Tus-Resumable, Tus-Version, Tus-Extension, Tus-Max-Size, Tus-Checksum-Algorithm, Stowage-File-Uuid, Warning, Retry-After';
export const ALLOWED_HEADERS =
  'Authorization, Origin, X-Requested-With, X-Request-ID, X-HTTP-Method-Override, Content-Type, Upload-Length, Upload-Offset, Tus-Resumable, Upload-Metadata, Upload-Defer-Length, Upload-Concat, Upload-Checksum, X-UC-User-Agent';
export const ALLOWED_METHODS = 'POST, GET, HEAD, PATCH, DELETE, OPTIONS';

/** The catalogue's tus errors, with this protocol's constants bound. */
export const tusErrors = {
  ...tusCatalogue,
  version: () => tusCatalogue.version(TUS_VERSION),
  contentType: () => tusCatalogue.contentType(CHUNK_CONTENT_TYPE),
  checksumAlgorithm: () => tusCatalogue.checksumAlgorithm(CHECKSUM_ALGORITHMS),
};

export function checkVersion(value: string | string[] | undefined): void {
  if (value !== TUS_VERSION) throw tusErrors.version();
}

/** A non-negative integer header (Upload-Length, Upload-Offset), or undefined when absent. */
export function intHeader(value: string | string[] | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^\d{1,16}$/.test(value.trim())) throw tusErrors.badHeader(name);
  const n = Number(value.trim());
  if (!Number.isSafeInteger(n)) throw tusErrors.badHeader(name);
  return n;
}

/**
 * Upload-Metadata: `key base64value` pairs separated by commas; a key may stand alone (empty
 * value). Keys are unique and carry no spaces or commas. Answers the decoded pairs.
 */
export function parseUploadMetadata(header: string | string[] | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (header === undefined || header === '') return out;
  if (typeof header !== 'string') throw tusErrors.badHeader('Upload-Metadata');
  for (const pair of header.split(',')) {
    const [key, value, ...rest] = pair.trim().split(/ +/);
    if (!key || rest.length > 0 || out.has(key) || !/^[\x21-\x7e]+$/.test(key)) throw tusErrors.badHeader('Upload-Metadata');
    if (value !== undefined && !/^[A-Za-z0-9+/]*={0,2}$/.test(value)) throw tusErrors.badHeader('Upload-Metadata');
    out.set(key, value === undefined ? '' : Buffer.from(value, 'base64').toString('utf8'));
  }
  return out;
}

export interface ExpectedChecksum {
  algorithm: ChecksumAlgorithm;
  digest: Buffer;
}

/** Upload-Checksum: `<algorithm> <base64 digest>`. */
export function parseChecksum(header: string | string[] | undefined): ExpectedChecksum | null {
  if (header === undefined) return null;
  if (typeof header !== 'string') throw tusErrors.badHeader('Upload-Checksum');
  const m = /^\s*([a-z0-9-]+) +([A-Za-z0-9+/]+={0,2})\s*$/.exec(header);
  if (!m) throw tusErrors.badHeader('Upload-Checksum');
  const algorithm = m[1] as string;
  if (!(CHECKSUM_ALGORITHMS as readonly string[]).includes(algorithm)) throw tusErrors.checksumAlgorithm();
  return { algorithm: algorithm as ChecksumAlgorithm, digest: Buffer.from(m[2] as string, 'base64') };
}

export function checksumMatches(expected: ExpectedChecksum, hash: crypto.Hash): boolean {
  const actual = hash.digest();
  return actual.length === expected.digest.length && crypto.timingSafeEqual(actual, expected.digest);
}

/** Upload-Expires: an RFC 9110 HTTP date. */
export function httpDate(us: number): string {
  return new Date(Math.floor(us / 1000)).toUTCString();
}

/**
 * ListObjectsV2 and ListObjects (V1): keys in UTF-8 byte order from the two keyset-paginated orders
 * of the repository, merged; `Delimiter` folds the keys sharing a prefix up to it into one
 * CommonPrefix and jumps past all of them at once (a new keyset read from the prefix's end).
 */
import { s3Error } from '../http/s3/errors.js';
import type { ObjectRow } from './repo.js';
import { compareKeys, prefixEnd } from './repo.js';
import type { ObjectService } from './service.js';
import { etagOf } from './read.js';
import { doc, el, sendXml } from './xml.js';
import type { S3Request } from './request.js';

const MAX_KEYS = 1000;

export interface ListParams {
  prefix: string;
  delimiter: string;
  maxKeys: number;
  /** Keys after this one (exclusive). */
  after: string;
}

interface ListPage {
  contents: ObjectRow[];
  prefixes: string[];
  truncated: boolean;
  /** Where the next page starts (exclusive): the last key, or past the last common prefix. */
  next: string;
  /** The last key or common prefix answered (V1's NextMarker). */
  last: string;
}

/** The rows of a batch in key order that come after `key`. */
function dropUpTo(rows: ObjectRow[], key: string): ObjectRow[] {
  const first = rows.findIndex((r) => compareKeys(r.key, key) > 0);
  return first === -1 ? [] : rows.slice(first);
}

/** Yields the project's objects in key order from `after` on, reading both orders in batches. */
class ObjectWalk {
  private keyed: ObjectRow[] = [];
  private unkeyed: ObjectRow[] = [];
  private keyedDone = false;
  private unkeyedDone = false;

  constructor(
    private readonly service: ListReads,
    private readonly projectId: number,
    private readonly prefix: string,
    private after: string,
    private readonly batch: number,
  ) {}

  /**
   * Goes on after `key` (exclusive): past a common prefix. Rows already read past it are kept (both
   * batches are in key order), so a page of common prefixes costs a read per batch, not per prefix.
   */
  skipTo(key: string): void {
    this.after = key;
    this.keyed = dropUpTo(this.keyed, key);
    this.unkeyed = dropUpTo(this.unkeyed, key);
  }

  async next(): Promise<ObjectRow | null> {
    const range = { after: this.after, prefix: this.prefix };
    if (this.keyed.length === 0 && !this.keyedDone) {
      this.keyed = await this.service.repo.keyed(this.projectId, range, this.batch);
      this.keyedDone = this.keyed.length < this.batch;
    }
    if (this.unkeyed.length === 0 && !this.unkeyedDone) {
      // The repository filters rows sharing the bound's uuid out after the read: ask for one more.
      this.unkeyed = await this.service.repo.unkeyed(this.projectId, range, this.batch + 1);
      this.unkeyedDone = this.unkeyed.length < this.batch;
    }
    const a = this.keyed[0];
    const b = this.unkeyed[0];
    const take = a && (!b || compareKeys(a.key, b.key) <= 0) ? this.keyed.shift() : this.unkeyed.shift();
    if (take) this.after = take.key;
    return take ?? null;
  }
}

/** The reads a listing needs: the repository's two orders. */
type ListReads = Pick<ObjectService, 'repo'>;

export async function listPage(service: ListReads, projectId: number, p: ListParams): Promise<ListPage> {
  const page: ListPage = { contents: [], prefixes: [], truncated: false, next: p.after, last: '' };
  if (p.maxKeys === 0) return page;
  const walk = new ObjectWalk(service, projectId, p.prefix, p.after, Math.min(p.maxKeys + 1, MAX_KEYS + 1));
  for (let o = await walk.next(); o !== null; o = await walk.next()) {
    const cut = p.delimiter === '' ? -1 : o.key.indexOf(p.delimiter, p.prefix.length);
    const common = cut === -1 ? null : o.key.slice(0, cut + p.delimiter.length);
    if (page.contents.length + page.prefixes.length === p.maxKeys) {
      page.truncated = true;
      return page;
    }
    if (common === null) {
      page.contents.push(o);
      page.next = page.last = o.key;
      continue;
    }
    // A marker inside this prefix: its keys were answered on an earlier page.
    if (!p.after.startsWith(common)) page.prefixes.push(common);
    const end = prefixEnd(common);
    if (end === null) break;
    // Every key under the prefix is below its end: the next key is past them all.
    page.next = `${common}\u{10ffff}`;
    page.last = common;
    walk.skipTo(page.next);
  }
  return page;
}

/** Parameters common to both versions; `after` from the version's own marker or token. */
function commonParams(r: S3Request): Omit<ListParams, 'after'> & { encodeUrl: boolean } {
  const maxText = r.query.get('max-keys');
  const maxKeys = maxText === null ? MAX_KEYS : Number(maxText);
  if (!Number.isInteger(maxKeys) || maxKeys < 0) throw s3Error(400, 'InvalidArgument', 'max-keys must be a non-negative integer.');
  const encoding = r.query.get('encoding-type');
  if (encoding !== null && encoding !== 'url') throw s3Error(400, 'InvalidArgument', 'Invalid Encoding Method specified in Request');
  return { prefix: r.query.get('prefix') ?? '', delimiter: r.query.get('delimiter') ?? '', maxKeys: Math.min(maxKeys, MAX_KEYS), encodeUrl: encoding === 'url' };
}

const lastModified = (us: number): string => new Date(Math.floor(us / 1000)).toISOString();

function contentsXml(o: ObjectRow, enc: (s: string) => string): string {
  const etag = etagOf(o);
  return `<Contents>${el('Key', enc(o.key))}${el('LastModified', lastModified(o.uploadedUs))}${etag ? el('ETag', etag) : ''}${el('Size', o.size)}${el('StorageClass', 'STANDARD')}</Contents>`;
}

/** `encoding-type=url`: keys and prefixes percent-encoded (aws-cli asks for it), `/` kept. */
const urlEncoder = (on: boolean) => (on ? (s: string) => encodeURIComponent(s).replace(/%2F/g, '/') : (s: string) => s);

const token = {
  encode: (after: string) => Buffer.from(after, 'utf8').toString('base64url'),
  decode: (text: string) => {
    const after = Buffer.from(text, 'base64url').toString('utf8');
    if (token.encode(after) !== text) throw s3Error(400, 'InvalidArgument', 'The continuation token provided is incorrect');
    return after;
  },
};

export async function listObjectsV2(r: S3Request, service: ObjectService, projectId: number): Promise<void> {
  const c = commonParams(r);
  const continuation = r.query.get('continuation-token');
  const startAfter = r.query.get('start-after') ?? '';
  const after = continuation !== null ? token.decode(continuation) : startAfter;
  const page = await listPage(service, projectId, { ...c, after });
  const enc = urlEncoder(c.encodeUrl);
  const body =
    el('Name', r.bucket) +
    el('Prefix', enc(c.prefix)) +
    (c.delimiter ? el('Delimiter', enc(c.delimiter)) : '') +
    el('MaxKeys', c.maxKeys) +
    el('KeyCount', page.contents.length + page.prefixes.length) +
    el('IsTruncated', page.truncated) +
    (continuation !== null ? el('ContinuationToken', continuation) : '') +
    (page.truncated ? el('NextContinuationToken', token.encode(page.next)) : '') +
    (startAfter ? el('StartAfter', enc(startAfter)) : '') +
    (c.encodeUrl ? el('EncodingType', 'url') : '') +
    page.contents.map((o) => contentsXml(o, enc)).join('') +
    page.prefixes.map((p) => `<CommonPrefixes>${el('Prefix', enc(p))}</CommonPrefixes>`).join('');
  sendXml(r.res, 200, doc('ListBucketResult', body));
}

export async function listObjectsV1(r: S3Request, service: ObjectService, projectId: number): Promise<void> {
  const c = commonParams(r);
  const marker = r.query.get('marker') ?? '';
  const page = await listPage(service, projectId, { ...c, after: marker });
  const enc = urlEncoder(c.encodeUrl);
  const body =
    el('Name', r.bucket) +
    el('Prefix', enc(c.prefix)) +
    el('Marker', enc(marker)) +
    // S3 gives NextMarker only with a delimiter; clients take the last key otherwise. Always given here.
    (page.truncated ? el('NextMarker', enc(page.last)) : '') +
    (c.delimiter ? el('Delimiter', enc(c.delimiter)) : '') +
    el('MaxKeys', c.maxKeys) +
    el('IsTruncated', page.truncated) +
    (c.encodeUrl ? el('EncodingType', 'url') : '') +
    page.contents.map((o) => contentsXml(o, enc)).join('') +
    page.prefixes.map((p) => `<CommonPrefixes>${el('Prefix', enc(p))}</CommonPrefixes>`).join('');
  sendXml(r.res, 200, doc('ListBucketResult', body));
}

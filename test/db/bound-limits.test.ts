/**
 * No statement on a request path binds its LIMIT as a bare parameter. SQLite reads a bare bound
 * LIMIT's value while planning, so it planned such a statement again on every run (as if never
 * prepared); a LIMIT written as a literal, or bound as `(? + 0)`, is planned once
 * (db/reusable-query.ts). Checked on both stores: the same SQL must run on PostgreSQL too.
 */
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConversionRepo } from '../../src/conversions/repo.js';
import { ContentRepo } from '../../src/files/contents/repo.js';
import { startFromLabels } from '../../src/files/labels/repo.js';
import { FileRepo } from '../../src/files/repo.js';
import { parseSearch, type SearchQuery } from '../../src/files/search-query.js';
import { MultipartRepo } from '../../src/s3/multipart/repo.js';
import { ObjectRepo } from '../../src/s3/repo.js';
import { TusRepo } from '../../src/tus/repo.js';
import { WebhookRepo } from '../../src/webhooks/repo.js';
import { recordingStatements, type RecordingDb } from '../helpers/statement-record.js';
import { migratedStore, type TestStore } from '../helpers/store.js';

let store: TestStore;
let recording: RecordingDb;
let files: FileRepo;
beforeAll(async () => {
  store = await migratedStore('bound-limits');
  recording = recordingStatements(store.db);
  files = new FileRepo(recording.db);
});
afterAll(async () => {
  files?.textIndex.close();
  await store?.close();
});

/** A LIMIT that is one bound parameter, as Kysely's `.limit(n)` compiles it on either store. */
const BARE_LIMIT = /\blimit\s+(\?|\$\d+)/i;

/** The statements `read` ran that have a LIMIT: each must be a literal or `(? + 0)`. */
async function limitsOf(read: () => Promise<unknown>): Promise<string[]> {
  recording.take();
  await read();
  const limited = recording.take().map((s) => s.sql).filter((s) => /\blimit\b/i.test(s));
  expect(limited.length).toBeGreaterThan(0);
  for (const s of limited) expect(s).not.toMatch(BARE_LIMIT);
  return limited;
}

function searchOf(body: unknown): SearchQuery {
  const parsed = parseSearch(body);
  if (!('query' in parsed)) throw new Error(JSON.stringify(parsed.errors));
  return parsed.query;
}

const uuid = crypto.randomUUID();

describe('LIMITs bound without re-planning on every run', () => {
  it('the files repository: from_url duplicates, the expiry sweep, search pages and the labels check before one', async () => {
    await limitsOf(() => files.latestFromUrl(1, 'https://example.com/a.png'));
    await limitsOf(() => files.expired(1, 500));
    await limitsOf(() => files.search(1, searchOf({ is_image: true }), { limit: 21, offset: 20, cursor: null }));
    await limitsOf(() => startFromLabels(recording.db.kysely, 1, ['cat']));
  });

  it('a file releasing its content, conversions and tus expiry', async () => {
    const contents = new ContentRepo(recording.db);
    await limitsOf(() => recording.db.kysely.transaction().execute((trx) => contents.release(trx, 1, uuid, 'no-such-blob')));
    await limitsOf(() => new ConversionRepo(recording.db).finishedFor(1, uuid, 'document', 'pdf'));
    await limitsOf(() => new TusRepo(recording.db).expired(1, 200));
  });

  it('S3 listings: objects, multipart uploads and their parts', async () => {
    const objects = new ObjectRepo(recording.db);
    await limitsOf(() => objects.keyed(1, { after: '', prefix: 'dir/' }, 1001));
    await limitsOf(() => objects.unkeyed(1, { after: '', prefix: '' }, 1002));
    const multipart = new MultipartRepo(recording.db);
    await limitsOf(() => multipart.parts('no-such-upload', 0, 1001));
    await limitsOf(() => multipart.list(1, '', '', '', 1001));
  });

  it('REST pages of a webhook’s deliveries', async () => {
    await limitsOf(() => new WebhookRepo(recording.db).deliveries(1, 101, null));
    await limitsOf(() => new WebhookRepo(recording.db).deliveries(1, 11, 40));
  });
});

/**
 * Server-side secrets (e.g. the key that signs multipart part URLs), created on first use and kept
 * in the metadata store so every node of a cluster signs and verifies with the same key and a
 * restart does not invalidate URLs already handed out.
 */
import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { nowUs } from '../core/time.js';

const cache = new Map<string, Promise<Buffer>>();

export function serverSecret(db: Kysely<Database>, name: string): Promise<Buffer> {
  let p = cache.get(name);
  if (!p) {
    p = load(db, name);
    cache.set(name, p);
    p.catch(() => cache.delete(name));
  }
  return p;
}

async function load(db: Kysely<Database>, name: string): Promise<Buffer> {
  // Two nodes may race here: both insert, one wins, both read the winner.
  await db
    .insertInto('server_secrets')
    .values({ name, value: crypto.randomBytes(32).toString('hex'), created_us: nowUs() })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const row = await db.selectFrom('server_secrets').select('value').where('name', '=', name).executeTakeFirstOrThrow();
  return Buffer.from(row.value, 'hex');
}

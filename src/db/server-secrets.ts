/** Queries of the server_secrets table: named random keys shared by every node (see uploads/server-secret.ts). */
import crypto from 'node:crypto';
import type { Db } from './connect.js';
import { nowUs } from '../core/time.js';

/** The secret called `name`, created on first use. Two nodes may race: both insert, one wins, both read the winner. */
export async function loadServerSecret(db: Db, name: string): Promise<Buffer> {
  await db.kysely
    .insertInto('server_secrets')
    .values({ name, value: crypto.randomBytes(32).toString('hex'), created_us: nowUs() })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const row = await db.kysely.selectFrom('server_secrets').select('value').where('name', '=', name).executeTakeFirstOrThrow();
  return Buffer.from(row.value, 'hex');
}

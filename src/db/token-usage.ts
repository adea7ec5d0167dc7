/**
 * Operations spent per upload token (signed uploads with an operations limit). The counter is
 * changed only by conditional UPDATEs, so concurrent requests, on any node, can never push `used`
 * past the limit.
 */
import { sql } from 'kysely';
import type { Db } from './connect.js';

export class TokenUsageRepo {
  constructor(private readonly store: Db) {}

  /** Spends `cost` operations of the token; false (and nothing spent) when that passes `limit`. */
  async spend(tokenId: string, cost: number, limit: number, expiresUs: number): Promise<boolean> {
    const db = this.store.kysely;
    await db
      .insertInto('token_usage')
      .values({ token_id: tokenId, used: 0, expires_us: expiresUs })
      .onConflict((oc) => oc.column('token_id').doNothing())
      .execute();
    const res = await db
      .updateTable('token_usage')
      .set({ used: sql<number>`used + ${cost}` })
      .where('token_id', '=', tokenId)
      .where(sql<boolean>`used + ${cost} <= ${limit}`)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  /** Gives back operations spent by a request that failed. */
  async refund(tokenId: string, cost: number): Promise<void> {
    await this.store.kysely
      .updateTable('token_usage')
      .set({ used: sql<number>`used - ${cost}` })
      .where('token_id', '=', tokenId)
      .execute();
  }
}

/**
 * PostgreSQL: file rows read by uuid through one batched query (db/read-batcher.ts), for the reads
 * made outside a transaction on every file info and CDN request. SQLite's reads are a synchronous
 * call in this process, with nothing to save by batching.
 */
import { CompiledQuery, type Kysely, type Selectable } from 'kysely';
import { ReadBatcher } from '../db/read-batcher.js';
import type { Database } from '../db/schema.js';

type Row = Selectable<Database['files']>;

/** Batches out at once: a share of the pool's 10 connections (db/connect.ts), leaving the rest to writes. */
const MAX_IN_FLIGHT = 4;
const MAX_BATCH = 128;

export function fileRowBatcher(db: Kysely<Database>): ReadBatcher<string, Row> {
  return new ReadBatcher<string, Row>(
    async (uuids) => {
      const { rows } = await db.executeQuery<Row>(CompiledQuery.raw('SELECT * FROM files WHERE uuid = ANY($1::text[])', [uuids]));
      return new Map(rows.map((r) => [r.uuid, r]));
    },
    { maxInFlight: MAX_IN_FLIGHT, maxBatch: MAX_BATCH },
  );
}

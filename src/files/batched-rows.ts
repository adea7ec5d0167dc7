/**
 * PostgreSQL: file rows read by uuid through one batched query (db/read-batcher.ts), for the reads
 * made outside a transaction on every file info and CDN request. SQLite's reads are a synchronous
 * call in this process, with nothing to save by batching. The query itself is the repository's.
 */
import { ReadBatcher } from '../db/read-batcher.js';

/** Batches out at once: a share of the pool's 10 connections (db/connect.ts), leaving the rest to writes. */
const MAX_IN_FLIGHT = 4;
const MAX_BATCH = 128;

export function fileRowBatcher<Row extends { uuid: string }>(rowsByUuid: (uuids: readonly string[]) => Promise<readonly Row[]>): ReadBatcher<string, Row> {
  return new ReadBatcher<string, Row>(
    async (uuids) => new Map((await rowsByUuid(uuids)).map((r) => [r.uuid, r])),
    { maxInFlight: MAX_IN_FLIGHT, maxBatch: MAX_BATCH },
  );
}

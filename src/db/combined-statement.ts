/**
 * PostgreSQL: the merged writes of a group commit's batch as one statement, each a data-modifying
 * CTE (`WITH p0 AS (INSERT …), p1 AS (UPDATE … RETURNING …) SELECT …`). node-postgres sends one
 * statement per round trip and each round trip is a socket write and a wake-up on both sides: a
 * webhook delivery's outcome (its attempt record, then its completion) was BEGIN, INSERT, UPDATE,
 * COMMIT, four round trips for a batch; combined it is one, atomic as a statement is, outside any
 * transaction when the batch has nothing else.
 *
 * Every part of a statement sees the same snapshot and none sees another's effects, so only
 * writes that do not depend on each other may be combined; a merged statement says so by having a
 * `part` (see MergedStatement). PostgreSQL also refuses two parts changing the same row.
 * SQLite runs merged statements one by one (no round trips to save; its CTEs cannot write).
 */
import { sql, type Kysely, type OperationNodeSource, type RawBuilder } from 'kysely';
import type { Database } from './schema.js';

/** A merged statement's writes as one part of a combined statement. */
export interface MergedPart<R> {
  /** An INSERT, UPDATE or DELETE builder; with RETURNING when `fromRows` reads rows. */
  query: OperationNodeSource;
  /** Whether the part returns rows that `fromRows` needs (false: it is given none). */
  returnsRows: boolean;
  /** One result per argument, in their order, from the part's returned rows (as JSON objects). */
  fromRows(rows: readonly Record<string, unknown>[]): R[];
  /**
   * Expressions the statement evaluates once besides the part's write, for their effect: the
   * pg_notify of the jobs a part inserts, delivered at the statement's commit as a transaction's
   * NOTIFY is at its COMMIT. The same expression (SQL text and parameters) of several parts is
   * evaluated once.
   */
  effects?: readonly RawBuilder<unknown>[];
}

/** Runs the parts as one statement; each part's results, in the order of `parts`. */
export async function runCombined(db: Kysely<Database>, parts: readonly MergedPart<unknown>[]): Promise<unknown[][]> {
  const names = parts.map((_, i) => sql.raw(`p${i}`));
  const ctes = sql.join(parts.map((p, i) => sql`${names[i]} AS (${p.query})`));
  // Rows of the parts that return some, tagged with their part's index (to_jsonb: one column
  // whatever each part returns). A data-modifying CTE runs whether or not it is read.
  const reads = parts.flatMap((p, i) => (p.returnsRows ? [sql`SELECT ${sql.lit(i)} AS part, to_jsonb(${names[i]}) AS row FROM ${names[i]}`] : []));
  // Effects as one row of part -1, read (so evaluated: pg_notify is volatile) and ignored.
  const effects = distinctEffects(db, parts);
  if (effects.length > 0) {
    const columns = sql.join(effects.map((e, i) => sql`${e} AS ${sql.raw(`e${i}`)}`));
    reads.push(sql`SELECT -1 AS part, to_jsonb(fx) AS row FROM (SELECT ${columns}) AS fx`);
  }
  const select = reads.length > 0 ? sql.join(reads, sql` UNION ALL `) : sql`SELECT NULL::int AS part, NULL::jsonb AS row WHERE false`;
  const { rows } = await sql<{ part: number; row: Record<string, unknown> }>`WITH ${ctes} ${select}`.execute(db);
  const byPart: Record<string, unknown>[][] = parts.map(() => []);
  for (const r of rows) if (r.part >= 0) byPart[r.part]!.push(r.row);
  return parts.map((p, i) => p.fromRows(byPart[i]!));
}

/** The parts' effects, each distinct SQL text with its parameters once. */
function distinctEffects(db: Kysely<Database>, parts: readonly MergedPart<unknown>[]): RawBuilder<unknown>[] {
  const seen = new Map<string, RawBuilder<unknown>>();
  for (const p of parts) {
    for (const e of p.effects ?? []) {
      const { sql: text, parameters } = e.compile(db);
      const key = JSON.stringify([text, parameters]);
      if (!seen.has(key)) seen.set(key, e);
    }
  }
  return [...seen.values()];
}

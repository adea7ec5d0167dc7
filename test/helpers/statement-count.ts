/**
 * A store handle that counts the statements run through it: for tests whose subject is how many
 * round trips a read or a write takes (batched reads, one statement per page, reads made once per
 * transaction).
 */
import type { KyselyPlugin, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import type { Db } from '../../src/db/connect.js';

export interface CountingDb {
  /** The store's handle with every statement counted (a reused template and raw SQL too; BEGIN and COMMIT are not). */
  db: Db;
  /** Statements counted since the last call. */
  take(): number;
}

export function countingStatements(store: Db): CountingDb {
  let statements = 0;
  const plugin: KyselyPlugin = {
    transformQuery: ({ node }): RootOperationNode => node,
    // Called once per statement executed, compiled here or before.
    transformResult: async ({ result }): Promise<QueryResult<UnknownRow>> => {
      statements++;
      return result;
    },
  };
  return {
    db: { ...store, kysely: store.kysely.withPlugin(plugin) },
    take: () => {
      const n = statements;
      statements = 0;
      return n;
    },
  };
}

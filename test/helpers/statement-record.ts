/**
 * A store handle that records every statement run through it: for tests whose
 * subject is the statement a read compiles to (how it binds its values), not only what it answers.
 */
import type { KyselyPlugin, QueryId, RootOperationNode } from 'kysely';
import type { Db } from '../../src/db/connect.js';

/** A statement as it ran: its SQL text and bound values. */
export interface RanStatement {
  sql: string;
  parameters: readonly unknown[];
}

export interface RecordingDb {
  /** The store's handle with every statement recorded (raw SQL and transactions too; BEGIN and COMMIT are not). */
  db: Db;
  /** The statements run since the last call. */
  take(): RanStatement[];
}

export function recordingStatements(store: Db): RecordingDb {
  const nodes = new Map<string, RootOperationNode>();
  let ran: RanStatement[] = [];
  const plugin: KyselyPlugin = {
    transformQuery: ({ node, queryId }: { node: RootOperationNode; queryId: QueryId }) => {
      nodes.set(queryId.queryId, node);
      return node;
    },
    transformResult: async ({ result, queryId }) => {
      const node = nodes.get(queryId.queryId);
      nodes.delete(queryId.queryId);
      if (node) ran.push(kysely.getExecutor().compileQuery(node, queryId));
      return result;
    },
  };
  const kysely = store.kysely.withPlugin(plugin);
  return {
    db: { ...store, kysely },
    take: () => {
      const texts = ran;
      ran = [];
      return texts;
    },
  };
}

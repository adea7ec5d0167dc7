/**
 * A query whose SQL is built and compiled once; each later run only swaps in its arguments.
 * Building a Kysely query (operation nodes, parsers, frozen objects) and compiling it to SQL cost
 * more CPU than SQLite's execution of a primary-key lookup: a hot path such as a file's info
 * (`GET /files/{uuid}/`, the CDN's lookup) runs the same shape over and over (docs/performance.md).
 *
 * The first run compiles with its real arguments and records which argument each bound parameter
 * came from; when that is not plain (two arguments equal, or a parameter that is none of them) it
 * runs uncompiled and tries again next time.
 */
import type { CompiledQuery, Compilable, QueryResult } from 'kysely';
import type { DbOrTrx } from './connect.js';

type Arg = string | number;

export function reusableQuery<A extends readonly Arg[], R>(build: (db: DbOrTrx, ...args: A) => Compilable<R>): (db: DbOrTrx, ...args: A) => Promise<QueryResult<R>> {
  let template: { compiled: CompiledQuery<R>; from: number[] } | null = null;
  return async (db, ...args) => {
    if (template) return db.executeQuery<R>({ ...template.compiled, parameters: template.from.map((i) => args[i]) });
    const compiled = build(db, ...args).compile();
    const from = compiled.parameters.map((p) => args.indexOf(p as Arg));
    const plain = new Set(args).size === args.length && from.every((i) => i >= 0);
    if (plain) template = { compiled, from };
    return db.executeQuery<R>(compiled);
  };
}

/**
 * PostgreSQL: a node holds at most `STOWAGE_DATABASE_POOL_MAX` pool connections, plus two of its own
 * (the job listener and the row cache's session), all named `stowage/<schema>` in pg_stat_activity.
 * Operators size max_connections from it; SQLite has no pool.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usingPostgres } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';

const POOL_MAX = 2;
const OWN_SESSIONS = 2;

describe.skipIf(!usingPostgres())('the PostgreSQL pool of one node', () => {
  const srv = useServer({ env: { STOWAGE_DATABASE_POOL_MAX: String(POOL_MAX) } });
  const observer = new pg.Client({ connectionString: process.env['STOWAGE_DATABASE_URL'] });
  beforeAll(() => observer.connect());
  afterAll(() => observer.end());

  const nodeConnections = async (): Promise<number> => {
    const { rows } = await observer.query<{ n: string }>('SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1', [`stowage/${srv.server.schema}`]);
    return Number(rows[0]?.n ?? 0);
  };

  it('stays within the setting under concurrent uploads and REST reads, and every request succeeds', async () => {
    let most = 0;
    let loading = true;
    const watching = (async () => {
      while (loading) {
        most = Math.max(most, await nodeConnections());
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    const uploads = Array.from({ length: 40 }, (_, i) => srv.uploadFile(`f${i}.txt`, `file ${i}`));
    const lists = Array.from({ length: 40 }, () => srv.call('GET', '/files/?limit=5'));
    const [uuids, answers] = await Promise.all([Promise.all(uploads), Promise.all(lists)]);
    loading = false;
    await watching;

    expect(new Set(uuids).size).toBe(40);
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    // The load reached the pool (more than the node's own two sessions); never more than allowed.
    expect(most).toBeGreaterThan(OWN_SESSIONS);
    expect(most).toBeLessThanOrEqual(POOL_MAX + OWN_SESSIONS);
  });
});

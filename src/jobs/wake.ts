/**
 * Waking workers when a job is enqueued, so a job is picked up without waiting for a poll.
 *
 * In this process: `enqueue` signals `localEnqueues`, and every worker of the process polls at once.
 * On SQLite that poll runs after the enqueuing transaction commits (one connection, taken in turn);
 * on PostgreSQL an enqueue inside a transaction wakes nobody directly (the claim would not see the
 * uncommitted row) — its NOTIFY does, because PostgreSQL delivers notifications at commit, to the
 * listeners of every node, this one included. Polling stays as the fallback for a lost listener.
 */
import type pg from 'pg';
import type { Logger } from 'pino';
import { connectionSettings } from '../db/pg-connection.js';

type Listener = (kind: string) => void;

/** Process-wide: an enqueue anywhere in the process wakes the workers of the process. */
class LocalSignal {
  private readonly listeners = new Set<Listener>();
  on(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  emit(kind: string): void {
    for (const l of this.listeners) l(kind);
  }
}

export const localEnqueues = new LocalSignal();

/** The NOTIFY channel; the payload is `<schema> <kind>`: nodes of other schemas ignore it. */
export const JOBS_CHANNEL = 'stowage_jobs';

export interface JobListener {
  close(): Promise<void>;
}

/**
 * LISTENs on a dedicated PostgreSQL connection and calls `wake` for every notification of our
 * schema. A dropped connection is reopened with growing delays; meanwhile workers poll.
 */
export function listenForJobs(url: string, schema: string | undefined, wake: (kind: string | null) => void, log: Logger): JobListener {
  let client: pg.Client | null = null;
  let closed = false;
  let retryMs = 500;
  let timer: NodeJS.Timeout | null = null;

  const connect = async () => {
    if (closed) return;
    // Only PostgreSQL nodes listen, so only they load the driver.
    const { Client } = (await import('pg')).default;
    if (closed) return;
    // The same search_path as the pool's, so current_schema() names what enqueue names.
    const c = new Client(connectionSettings(url, schema));
    client = c;
    let ours: string | null = null;
    c.on('notification', (msg) => {
      const [schemaOf, kind] = (msg.payload ?? '').split(' ', 2);
      if (msg.channel === JOBS_CHANNEL && schemaOf === ours) wake(kind ?? null);
    });
    c.on('error', (err) => log.warn({ err }, 'job notification connection failed; polling until it is back'));
    c.on('end', () => {
      if (client === c) client = null;
      if (!closed) retry();
    });
    try {
      await c.connect();
      ours = (await c.query<{ s: string }>('SELECT current_schema() AS s')).rows[0]?.s ?? null;
      await c.query(`LISTEN ${JOBS_CHANNEL}`);
      retryMs = 500;
      // Jobs enqueued while we were not listening are due now.
      wake(null);
    } catch (err) {
      log.warn({ err }, 'could not listen for job notifications; polling until it works');
      await c.end().catch(() => undefined);
      retry();
    }
  };
  const retry = () => {
    if (timer || closed) return;
    timer = setTimeout(() => {
      timer = null;
      void connect();
    }, retryMs);
    timer.unref();
    retryMs = Math.min(30_000, retryMs * 2);
  };

  void connect();
  return {
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      await client?.end().catch(() => undefined);
    },
  };
}

/** Queries of the dashboard_sessions table. */
import type { Db } from '../db/connect.js';
import type { Usage } from './usage.js';

export interface SessionRow {
  tokenHash: string;
  projectId: number;
  pubKey: string;
  /** SHA-256 of the secret key signed in with; null for an admin-token sign-in. */
  secretHash: string | null;
  createdUs: number;
  expiresUs: number;
}

export class SessionRepo {
  constructor(private readonly store: Db) {}

  async insert(row: SessionRow): Promise<void> {
    await this.store.kysely
      .insertInto('dashboard_sessions')
      .values({ token_hash: row.tokenHash, project_id: row.projectId, pub_key: row.pubKey, secret_hash: row.secretHash, created_us: row.createdUs, expires_us: row.expiresUs })
      .execute();
  }

  async find(tokenHash: string): Promise<SessionRow | null> {
    const r = await this.store.kysely.selectFrom('dashboard_sessions').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
    if (!r) return null;
    return { tokenHash: r.token_hash, projectId: Number(r.project_id), pubKey: r.pub_key, secretHash: r.secret_hash, createdUs: Number(r.created_us), expiresUs: Number(r.expires_us) };
  }

  async remove(tokenHash: string): Promise<void> {
    await this.store.kysely.deleteFrom('dashboard_sessions').where('token_hash', '=', tokenHash).execute();
  }

  /** Drops sessions that ended before `nowUs`; answers how many. */
  async removeExpired(nowUs: number): Promise<number> {
    const r = await this.store.kysely.deleteFrom('dashboard_sessions').where('expires_us', '<=', nowUs).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}

export class UsageRepo {
  constructor(private readonly store: Db) {}

  /** One pass over the project's rows (the project_id index): a dashboard view, not a hot path. */
  async forProject(projectId: number): Promise<Usage> {
    const rows = await this.store.kysely
      .selectFrom('files')
      .select((eb) => [
        eb.fn.countAll<number | string>().as('files'),
        eb.fn.sum<number | string | null>('size').as('bytes'),
        eb.case().when('removed_us', 'is not', null).then('removed').when('stored_us', 'is not', null).then('stored').else('unstored').end().as('state'),
      ])
      .where('project_id', '=', projectId)
      .groupBy('state')
      .execute();
    const of = (state: string) => rows.find((r) => r.state === state);
    const files = (state: string) => Number(of(state)?.files ?? 0);
    const bytes = (state: string) => Number(of(state)?.bytes ?? 0);
    return { stored: { files: files('stored'), bytes: bytes('stored') }, unstored: { files: files('unstored'), bytes: bytes('unstored') }, removed: { files: files('removed') } };
  }
}

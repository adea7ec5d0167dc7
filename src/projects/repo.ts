/** Queries for projects and their secret keys. */
import type { Kysely, Selectable } from 'kysely';
import type { Db } from '../db/connect.js';
import type { Database } from '../db/schema.js';

export interface ProjectRow {
  id: number;
  name: string;
  pubKey: string;
  autostore: boolean;
  signedUploads: boolean;
  createdUs: number;
  /** CDN URLs need a token (docs/cdn-signed-urls.md). */
  signedCdn: boolean;
  /** Hex key of CDN tokens, null until first needed. */
  cdnSecret: string | null;
}

export interface ProjectPatch {
  autostore?: boolean;
  signedUploads?: boolean;
  signedCdn?: boolean;
  cdnSecret?: string;
}

export interface SecretKeyRow {
  id: number;
  projectId: number;
  secret: string;
  createdUs: number;
  revokedUs: number | null;
}

type Row = Selectable<Database['projects']>;
const toProject = (r: Row): ProjectRow => ({
  id: Number(r.id),
  name: r.name,
  pubKey: r.pub_key,
  autostore: r.autostore === 1,
  signedUploads: r.signed_uploads === 1,
  createdUs: r.created_us,
  signedCdn: Number(r.signed_cdn) === 1,
  cdnSecret: r.cdn_secret,
});

export class ProjectRepo {
  private readonly db: Kysely<Database>;

  constructor(store: Db) {
    this.db = store.kysely;
  }

  async insert(p: Omit<ProjectRow, 'id' | 'signedCdn' | 'cdnSecret'>, secret: string): Promise<ProjectRow> {
    return this.db.transaction().execute(async (trx) => {
      const row = await trx
        .insertInto('projects')
        .values({
          name: p.name,
          pub_key: p.pubKey,
          autostore: p.autostore ? 1 : 0,
          signed_uploads: p.signedUploads ? 1 : 0,
          created_us: p.createdUs,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      await trx.insertInto('secret_keys').values({ project_id: row.id, secret, created_us: p.createdUs, revoked_us: null }).execute();
      return toProject(row);
    });
  }

  async list(): Promise<ProjectRow[]> {
    return (await this.db.selectFrom('projects').selectAll().orderBy('id').execute()).map(toProject);
  }

  async byPubKey(pubKey: string): Promise<ProjectRow | null> {
    const row = await this.db.selectFrom('projects').selectAll().where('pub_key', '=', pubKey).executeTakeFirst();
    return row ? toProject(row) : null;
  }

  async byId(id: number): Promise<ProjectRow | null> {
    const row = await this.db.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toProject(row) : null;
  }

  async update(id: number, patch: ProjectPatch): Promise<void> {
    const values: { autostore?: number; signed_uploads?: number; signed_cdn?: number; cdn_secret?: string } = {};
    if (patch.autostore !== undefined) values.autostore = patch.autostore ? 1 : 0;
    if (patch.signedUploads !== undefined) values.signed_uploads = patch.signedUploads ? 1 : 0;
    if (patch.signedCdn !== undefined) values.signed_cdn = patch.signedCdn ? 1 : 0;
    if (patch.cdnSecret !== undefined) values.cdn_secret = patch.cdnSecret;
    if (Object.keys(values).length > 0) await this.db.updateTable('projects').set(values).where('id', '=', id).execute();
  }

  /** Sets the CDN key unless one exists (two nodes racing keep the first); returns the key in force. */
  async ensureCdnSecret(id: number, candidate: string): Promise<string> {
    await this.db.updateTable('projects').set({ cdn_secret: candidate }).where('id', '=', id).where('cdn_secret', 'is', null).execute();
    const row = await this.db.selectFrom('projects').select('cdn_secret').where('id', '=', id).executeTakeFirstOrThrow();
    return row.cdn_secret ?? candidate;
  }

  async addSecret(projectId: number, secret: string, createdUs: number): Promise<SecretKeyRow> {
    const r = await this.db
      .insertInto('secret_keys')
      .values({ project_id: projectId, secret, created_us: createdUs, revoked_us: null })
      .returningAll()
      .executeTakeFirstOrThrow();
    return { id: Number(r.id), projectId, secret, createdUs, revokedUs: null };
  }

  async secrets(projectId: number, includeRevoked = false): Promise<SecretKeyRow[]> {
    let q = this.db.selectFrom('secret_keys').selectAll().where('project_id', '=', projectId);
    if (!includeRevoked) q = q.where('revoked_us', 'is', null);
    const rows = await q.orderBy('id').execute();
    return rows.map((r) => ({
      id: Number(r.id),
      projectId: Number(r.project_id),
      secret: r.secret,
      createdUs: r.created_us,
      revokedUs: r.revoked_us,
    }));
  }

  /** Returns false when no active key with that id exists in the project. */
  async revokeSecret(projectId: number, keyId: number, nowUs: number): Promise<boolean> {
    const res = await this.db
      .updateTable('secret_keys')
      .set({ revoked_us: nowUs })
      .where('project_id', '=', projectId)
      .where('id', '=', keyId)
      .where('revoked_us', 'is', null)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }
}

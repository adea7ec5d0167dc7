/** Queries of the custom_storages table (see service.ts for what a custom storage is). */
import type { Kysely, Selectable } from 'kysely';
import type { Db } from '../../db/connect.js';
import type { Database } from '../../db/schema.js';

export interface CustomStorage {
  id: number;
  projectId: number;
  name: string;
  endpoint: string | null;
  region: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  forcePathStyle: boolean;
  pattern: string;
}

export type NewStorage = Omit<CustomStorage, 'id'>;

type Row = Selectable<Database['custom_storages']>;
const toStorage = (r: Row): CustomStorage => ({
  id: Number(r.id),
  projectId: Number(r.project_id),
  name: r.name,
  endpoint: r.endpoint,
  region: r.region,
  bucket: r.bucket,
  accessKeyId: r.access_key_id,
  secretAccessKey: r.secret_access_key,
  forcePathStyle: r.force_path_style === 1,
  pattern: r.pattern,
});

export class StorageRepo {
  private readonly db: Kysely<Database>;

  constructor(store: Db) {
    this.db = store.kysely;
  }

  async insert(s: NewStorage, createdUs: number): Promise<void> {
    await this.db
      .insertInto('custom_storages')
      .values({
        project_id: s.projectId,
        name: s.name,
        endpoint: s.endpoint,
        region: s.region,
        bucket: s.bucket,
        access_key_id: s.accessKeyId,
        secret_access_key: s.secretAccessKey,
        force_path_style: s.forcePathStyle ? 1 : 0,
        pattern: s.pattern,
        created_us: createdUs,
      })
      .execute();
  }

  async byName(projectId: number, name: string): Promise<CustomStorage | null> {
    const r = await this.db.selectFrom('custom_storages').selectAll().where('project_id', '=', projectId).where('name', '=', name).executeTakeFirst();
    return r ? toStorage(r) : null;
  }

  async list(projectId: number): Promise<CustomStorage[]> {
    const rows = await this.db.selectFrom('custom_storages').selectAll().where('project_id', '=', projectId).orderBy('name').execute();
    return rows.map(toStorage);
  }

  async remove(projectId: number, name: string): Promise<boolean> {
    const res = await this.db.deleteFrom('custom_storages').where('project_id', '=', projectId).where('name', '=', name).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }
}

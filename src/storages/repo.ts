/**
 * Custom storages of a project: S3-compatible buckets that remote copies write to. Configured by
 * the operator (`stowage storage add`), never through the API, so their endpoints are trusted
 * configuration; credentials are kept in the metadata store like the project's secret keys.
 */
import type { Kysely, Selectable } from 'kysely';
import type { Database } from '../db/schema.js';
import { AppError } from '../core/errors.js';
import { nowUs } from '../core/time.js';
import { validatePattern } from '../copies/pattern.js';

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
  constructor(private readonly db: Kysely<Database>) {}

  async add(s: NewStorage): Promise<CustomStorage> {
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(s.name)) throw new AppError(400, 'InvalidName', 'storage name must be 1-64 characters of A-Z a-z 0-9 _ . -');
    if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(s.bucket)) throw new AppError(400, 'InvalidBucket', 'bucket must be a valid S3 bucket name');
    if (s.endpoint !== null && !/^https?:\/\/[^/\s]+\/?$/.test(s.endpoint)) throw new AppError(400, 'InvalidEndpoint', 'endpoint must be an http(s) URL without a path, e.g. https://s3.example.com');
    validatePattern(s.pattern);
    const existing = await this.byName(s.projectId, s.name);
    if (existing) throw new AppError(409, 'StorageExists', `the project already has a storage named ${s.name}`);
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
        created_us: nowUs(),
      })
      .execute();
    return (await this.byName(s.projectId, s.name)) as CustomStorage;
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

/**
 * Custom storages of a project: S3-compatible buckets that remote copies write to. Configured by
 * the operator (`stowage storage add`), never through the API, so their endpoints are trusted
 * configuration; credentials are kept in the metadata store like the project's secret keys.
 */
import type { Db } from '../../db/connect.js';
import { nowUs } from '../../core/time.js';
import { validatePattern } from '../pattern.js';
import { StorageRepo, type CustomStorage, type NewStorage } from './repo.js';
import { adminErrors } from '../../core/error-catalogue/admin.js';

export type { CustomStorage, NewStorage };

export class StorageService {
  private readonly repo: StorageRepo;

  constructor(db: Db) {
    this.repo = new StorageRepo(db);
  }

  async add(s: NewStorage): Promise<CustomStorage> {
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(s.name)) throw adminErrors.storageNameInvalid();
    if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(s.bucket)) throw adminErrors.storageBucketInvalid();
    if (s.endpoint !== null && !/^https?:\/\/[^/\s]+\/?$/.test(s.endpoint)) throw adminErrors.storageEndpointInvalid();
    validatePattern(s.pattern);
    const existing = await this.repo.byName(s.projectId, s.name);
    if (existing) throw adminErrors.storageExists(s.name);
    await this.repo.insert(s, nowUs());
    return (await this.repo.byName(s.projectId, s.name)) as CustomStorage;
  }

  byName(projectId: number, name: string): Promise<CustomStorage | null> {
    return this.repo.byName(projectId, name);
  }

  list(projectId: number): Promise<CustomStorage[]> {
    return this.repo.list(projectId);
  }

  /** False when the project has no storage of that name. */
  remove(projectId: number, name: string): Promise<boolean> {
    return this.repo.remove(projectId, name);
  }
}

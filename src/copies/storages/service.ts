/**
 * Custom storages of a project: S3-compatible buckets that remote copies write to. Configured by
 * the operator (`stowage storage add`), never through the API, so their endpoints are trusted
 * configuration; credentials are kept in the metadata store like the project's secret keys.
 */
import type { Db } from '../../db/connect.js';
import { AppError } from '../../core/errors.js';
import { nowUs } from '../../core/time.js';
import { validatePattern } from '../pattern.js';
import { StorageRepo, type CustomStorage, type NewStorage } from './repo.js';

export type { CustomStorage, NewStorage };

export class StorageService {
  private readonly repo: StorageRepo;

  constructor(db: Db) {
    this.repo = new StorageRepo(db);
  }

  async add(s: NewStorage): Promise<CustomStorage> {
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(s.name)) throw new AppError(400, 'InvalidName', 'storage name must be 1-64 characters of A-Z a-z 0-9 _ . -');
    if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(s.bucket)) throw new AppError(400, 'InvalidBucket', 'bucket must be a valid S3 bucket name');
    if (s.endpoint !== null && !/^https?:\/\/[^/\s]+\/?$/.test(s.endpoint)) throw new AppError(400, 'InvalidEndpoint', 'endpoint must be an http(s) URL without a path, e.g. https://s3.example.com');
    validatePattern(s.pattern);
    const existing = await this.repo.byName(s.projectId, s.name);
    if (existing) throw new AppError(409, 'StorageExists', `the project already has a storage named ${s.name}`);
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

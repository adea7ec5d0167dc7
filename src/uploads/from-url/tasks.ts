/**
 * from_url tasks: one row per accepted URL, the state `/from_url/status/` reports. The row is
 * created together with its fetch job (same transaction), so an acknowledged token always gets a
 * fetch, on this node or another, even across restarts.
 */
import type { Db } from '../../db/connect.js';
import { enqueue } from '../../jobs/queue.js';
import { newUuid } from '../../core/ids.js';
import { nowUs } from '../../core/time.js';
import type { StoreChoice } from '../../core/file-record.js';
import { FromUrlTaskRepo, type TaskRow } from './repo.js';

export const FROM_URL_FETCH_JOB = 'from_url.fetch';
export const FROM_URL_FORGET_JOB = 'from_url.forget';
/** Tokens answer `unknown` after this (the SDK treats unknown as "not found"). */
export const TASK_TTL_MS = 24 * 3600 * 1000;

export type { TaskRow };

export interface FromUrlOptions {
  pubKey: string;
  filename: string | null;
  store: StoreChoice;
  metadata: Record<string, string>;
  /** Normalized tags; absent in tasks created before tags existed. */
  tags?: string[];
  /** Whether the new file remembers its source URL (so later duplicate checks find it). */
  saveDuplicates: boolean;
  /** The uuid the file will get, chosen up front so a re-run after a crash cannot make two files. */
  fileUuid: string;
  requestId: string;
}

export class FromUrlTasks {
  private readonly repo: FromUrlTaskRepo;

  constructor(private readonly db: Db) {
    this.repo = new FromUrlTaskRepo(db);
  }

  async create(projectId: number, sourceUrl: string, options: Omit<FromUrlOptions, 'fileUuid'>): Promise<string> {
    const token = newUuid();
    const now = nowUs();
    const opts: FromUrlOptions = { ...options, fileUuid: newUuid() };
    await this.db.transaction(async (trx) => {
      await this.repo.insert(trx, { token, project_id: projectId, source_url: sourceUrl, options: JSON.stringify(opts), status: 'waiting', done: 0, total: null, file_uuid: null, error: null, error_code: null, created_us: now, updated_us: now });
      await enqueue(trx, { kind: FROM_URL_FETCH_JOB, payload: { token }, maxAttempts: 5, uniqueKey: `from-url:${token}` });
      await enqueue(trx, { kind: FROM_URL_FORGET_JOB, payload: { token }, runAtUs: now + TASK_TTL_MS * 1000, uniqueKey: `from-url-forget:${token}` });
    });
    return token;
  }

  async get(token: string): Promise<TaskRow | undefined> {
    return this.repo.get(token);
  }

  options(row: TaskRow): FromUrlOptions {
    return JSON.parse(row.options) as FromUrlOptions;
  }

  /** `total` null (not known yet) keeps a total already recorded: a retried fetch does not forget it. */
  async progress(token: string, done: number, total: number | null): Promise<void> {
    await this.repo.progress(token, done, total, nowUs());
  }

  async succeed(token: string, fileUuid: string): Promise<void> {
    await this.repo.succeed(token, fileUuid, nowUs());
  }

  async fail(token: string, code: string, message: string): Promise<void> {
    await this.repo.fail(token, code, message.slice(0, 500), nowUs());
  }

  async forget(token: string): Promise<void> {
    await this.repo.delete(token);
  }
}

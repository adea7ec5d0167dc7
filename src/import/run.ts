/**
 * `stowage import`: copies a project from a server speaking the REST API into a local project,
 * keeping uuids, so only the host of every CDN URL changes. Live files first (bytes streamed
 * from the source CDN), then removed files (rows only), then groups. Every run lists the whole
 * source again and skips what this server already has: a run that was killed is finished by
 * running it again, and a finished one changes nothing when run again.
 */
import { pipeline, Transform, type Readable } from 'node:stream';
import type { FileRecord } from '../core/file-record.js';
import { systemInitiator } from '../jobs/file-events.js';
import type { ProjectRow } from '../projects/service.js';
import type { FileRestorer } from '../files/restore.js';
import type { GroupService } from '../groups/service.js';
import type { ImportCounters, Tally } from './counters.js';
import { PermanentError, withRetries, type RetryPolicy } from './retry.js';
import type { SourceClient } from './source-client.js';
import { claimedUuid, GONE_MEMBER, parseFile, parseGroup, parseGroupSummary, parsePage, type SourceFile } from './wire.js';

export interface ImportTarget {
  project: ProjectRow;
  files: FileRestorer;
  groups: GroupService;
  /** This server's upload limit: a bigger file fails as an upload would. */
  maxBytes: number;
}

export interface ImportSettings {
  /** Files (or groups) copied at the same time. */
  concurrency: number;
  retry: RetryPolicy;
  /** Where file bytes are read: `<cdnBase>/<uuid>/`; null: each file's own original_file_url. */
  cdnBase: string | null;
}

const PAGE = 100;

export async function runImport(source: SourceClient, target: ImportTarget, settings: ImportSettings, counters: ImportCounters): Promise<void> {
  const run = new ImportRun(source, target, settings, counters);
  await run.files('files/?limit=' + PAGE + '&include=appdata', false);
  await run.files('files/?removed=true&limit=' + PAGE + '&include=appdata', true);
  await run.groups();
}

class ImportRun {
  private readonly initiator = systemInitiator();

  constructor(
    private readonly source: SourceClient,
    private readonly target: ImportTarget,
    private readonly settings: ImportSettings,
    private readonly counters: ImportCounters,
  ) {}

  /** Walks one file listing page by page; each page's files are copied before the next is asked for. */
  async files(first: string, removed: boolean): Promise<void> {
    await this.walk(first, this.counters.files, async (results) => {
      const parsed: SourceFile[] = [];
      for (const entry of results) {
        try {
          parsed.push(parseFile(entry));
        } catch (err) {
          this.fail('file', claimedUuid(entry), err);
        }
      }
      const here = await this.target.files.existing(parsed.map((f) => f.uuid));
      await eachLimited(parsed, this.settings.concurrency, (f) => this.file(f, here.get(f.uuid) ?? null, removed));
    });
  }

  private async file(f: SourceFile, here: FileRecord | null, removed: boolean): Promise<void> {
    try {
      if (here) {
        await this.checkSame(f, here);
        this.counters.files.present++;
        return;
      }
      if (removed || f.removedUs !== null) await this.target.files.restoreRemoved(this.target.project, f, this.initiator);
      else await withRetries(this.settings.retry, () => this.copyLive(f), () => this.counters.retries++);
      this.counters.files.imported++;
    } catch (err) {
      this.fail('file', f.uuid, err);
    }
  }

  private async copyLive(f: SourceFile): Promise<void> {
    const body = await this.source.download(this.fileUrl(f));
    await this.target.files.restoreLive(this.target.project, f, this.counted(body), this.target.maxBytes, this.initiator);
  }

  /**
   * A uuid already here is the same file only in this project, with the source's size and name
   * and, when the source CDN gives a strong ETag (Stowage's is the MD5), the same bytes.
   * Anything else is reported and left as it is.
   */
  private async checkSame(f: SourceFile, here: FileRecord): Promise<void> {
    if (here.projectId !== this.target.project.id) throw new PermanentError('this uuid belongs to another project here');
    if (here.size !== f.size || here.originalFilename !== f.originalFilename) {
      throw new PermanentError(`already here with other content (${here.size} bytes "${here.originalFilename}", the source has ${f.size} bytes "${f.originalFilename}")`);
    }
    if (f.removedUs !== null || here.md5 === '') return;
    const etag = await this.source.etag(this.fileUrl(f));
    if (etag && /^[0-9a-f]{32}$/i.test(etag) && etag.toLowerCase() !== here.md5) throw new PermanentError(`already here with other content (MD5 ${here.md5}, the source's ETag ${etag})`);
  }

  private fileUrl(f: SourceFile): string {
    if (this.settings.cdnBase) return `${this.settings.cdnBase.replace(/\/+$/, '')}/${f.uuid}/`;
    if (f.fileUrl) return f.fileUrl;
    throw new PermanentError('the source gives no original_file_url (pass --from-cdn)');
  }

  /**
   * The body with its bytes counted for the progress line. pipeline(): when the store gives up
   * (too large, an error), the source connection is closed too rather than left hanging.
   */
  private counted(body: Readable): Transform {
    const counter = new Transform({
      transform: (chunk: Buffer, _enc, done) => {
        this.counters.bytes += chunk.length;
        done(null, chunk);
      },
    });
    return pipeline(body, counter, () => undefined);
  }

  async groups(): Promise<void> {
    await this.walk('groups/?limit=' + PAGE, this.counters.groups, async (results) => {
      await eachLimited(results, this.settings.concurrency, (entry) => this.group(entry));
    });
  }

  private async group(entry: unknown): Promise<void> {
    let id = claimedUuid(entry);
    try {
      id = parseGroupSummary(entry).id;
      const g = parseGroup(await this.source.getJson(`groups/${encodeURIComponent(id)}/`));
      // A member whose file failed to come over would read as removed: leave the group for the next run.
      const wanted = [...new Set(g.members.map((m) => m.fileUuid))];
      const here = await this.target.files.existing(wanted);
      const missing = wanted.filter((u) => u !== GONE_MEMBER && !here.has(u));
      if (missing.length > 0) throw new PermanentError(`its files ${missing.slice(0, 3).join(', ')}${missing.length > 3 ? ', …' : ''} are not here`);
      const outcome = await this.target.groups.restore(this.target.project.id, g);
      this.counters.groups[outcome === 'imported' ? 'imported' : 'present']++;
    } catch (err) {
      this.fail('group', id, err);
    }
  }

  /** Follows `next` links from `first`, handing each page's entries to `page`. */
  private async walk(first: string, tally: Tally, page: (results: unknown[]) => Promise<void>): Promise<void> {
    let next: string | null = first;
    let firstPage = true;
    while (next) {
      let p: ReturnType<typeof parsePage>;
      try {
        p = parsePage(await this.source.getJson(next), next);
      } catch (err) {
        // Without the page its entries are unknown: report the listing and go on with the next one.
        this.fail(tally === this.counters.files ? 'file' : 'group', `listing ${next}`, err);
        return;
      }
      if (firstPage && p.total !== null) tally.total = (tally.total ?? 0) + p.total;
      firstPage = false;
      await page(p.results);
      next = p.next;
    }
  }

  private fail(kind: 'file' | 'group', id: string, err: unknown): void {
    this.counters[kind === 'file' ? 'files' : 'groups'].failed++;
    this.counters.failures.push({ kind, id, reason: err instanceof Error ? err.message : String(err) });
  }
}

/** Runs `fn` over `items`, at most `limit` at a time. */
async function eachLimited<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let at = 0;
  const lane = async () => {
    while (at < items.length) await fn(items[at++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}

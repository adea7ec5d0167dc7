/**
 * Conversions: accepting paths (each a problem or a queued job with its token and result uuid),
 * status by token, the formats a document converts to, and running a job: the source as a local
 * file, the tool in a private work directory under the data dir, the results ingested as new files
 * of the project (and a group for pages or thumbnails), the row finished or failed.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { AppContext } from '../context.js';
import type { MakeGroup } from '../feature.js';
import type { FileRecord } from '../core/file-record.js';
import { newUuid } from '../core/ids.js';
import { nowUs } from '../core/time.js';
import { openLocal } from '../blobs/local-file.js';
import type { Initiator } from '../jobs/file-events.js';
import { enqueue, type ClaimedJob } from '../jobs/queue.js';
import { ConversionRepo, type ConversionRow, type NewConversion } from './repo.js';
import { parseDocumentPath, parseVideoPath, type DocumentTarget, type VideoTarget } from './paths.js';
import { isImageTarget, sourceDocument, targetsOf } from './formats.js';
import { convertDocument, type ConvertedFile } from './document.js';
import { convertVideo } from './video.js';
import { ToolError } from './tool.js';
import { restErrors } from '../core/error-catalogue/rest.js';
import { cdnErrors } from '../core/error-catalogue/media.js';
import type { DocumentInfoJson, StatusJson, SubmittedJson } from './json.js';

export type ConversionKind = 'document' | 'video';

/** The initiator of result files (wire-reference: add-on names of the public service's converters). */
const ADDON_NAME: Record<ConversionKind, string> = { document: 'zamzar_convert_document', video: 'zencoder_convert_video' };

const badPath = (p: string): string => `Bad path "${p}". Use UUID or CDN URL`;

export class ConversionService {
  private readonly repo: ConversionRepo;
  /** Work directories of running jobs live here; what a crash leaves is removed at start. */
  readonly workRoot: string;

  constructor(private readonly ctx: AppContext, private readonly makeGroup: MakeGroup) {
    this.repo = new ConversionRepo(ctx.db);
    this.workRoot = path.join(ctx.config.dataDir, 'convert-work');
  }

  /**
   * Removes work directories a crashed process left: only those older than the longest job, as
   * another node on the same data dir may be converting in the young ones.
   */
  async sweepWork(): Promise<void> {
    const cutoff = Date.now() - Math.max(this.ctx.config.convertDocumentTimeoutMs, this.ctx.config.convertVideoTimeoutMs) - 60_000;
    for (const name of await fsp.readdir(this.workRoot).catch(() => [] as string[])) {
      const dir = path.join(this.workRoot, name);
      const st = await fsp.stat(dir).catch(() => null);
      if (st && st.mtimeMs < cutoff) await fsp.rm(dir, { recursive: true, force: true });
    }
  }

  async submit(kind: ConversionKind, projectId: number, paths: string[], opts: { store: 'auto' | '1' | '0'; saveInGroup: boolean }): Promise<{ result: SubmittedJson[]; problems: Record<string, string> }> {
    const problems: Record<string, string> = {};
    const accepted: Array<{ path: string; row: NewConversion }> = [];
    for (const p of paths) {
      const checked = await this.check(kind, projectId, p);
      if (typeof checked === 'string') {
        problems[p] = checked;
        continue;
      }
      const now = nowUs();
      const thumbs = kind === 'video' ? (checked.target as VideoTarget).thumbs : null;
      accepted.push({
        path: p,
        row: {
          project_id: projectId, kind, source_uuid: checked.file.uuid, path: p, target: JSON.stringify(checked.target),
          store: opts.store, save_in_group: opts.saveInGroup ? 1 : 0, result_uuid: newUuid(),
          group_uuid: thumbs === null ? null : newUuid(), group_count: thumbs,
          status: 'pending', error: null, created_us: now, updated_us: now,
        },
      });
    }
    const result: SubmittedJson[] = [];
    await this.ctx.db.transaction(async (trx) => {
      result.length = 0;
      for (const { path: p, row } of accepted) {
        const token = await this.repo.insert(trx, row);
        await enqueue(trx, { kind: kind === 'document' ? 'convert.document' : 'convert.video', payload: { token }, maxAttempts: 3, fairKey: String(projectId) });
        const json: SubmittedJson = { original_source: p, token, uuid: row.result_uuid };
        if (row.group_uuid) json.thumbnails_group_uuid = `${row.group_uuid}~${row.group_count}`;
        result.push(json);
      }
    });
    return { result, problems };
  }

  /** The source file and parsed target, or the problem text for this path. */
  private async check(kind: ConversionKind, projectId: number, p: unknown): Promise<{ file: FileRecord; target: DocumentTarget | VideoTarget } | string> {
    if (typeof p !== 'string') return badPath(String(p));
    const parsed = kind === 'document' ? parseDocumentPath(p) : parseVideoPath(p);
    if (!parsed.ok) return parsed.problem;
    const file = await this.ctx.files.find(projectId, parsed.uuid);
    if (!file || file.removedUs !== null || !file.blobKey) return badPath(p);
    if (!file.isReady) return 'File is not ready yet.';
    if (file.size > this.ctx.config.convertMaxBytes) return `Bad path "${p}": the file is larger than ${this.ctx.config.convertMaxBytes} bytes, the largest this server converts.`;
    if (kind === 'document') {
      const target = parsed.target as DocumentTarget;
      const source = sourceDocument(file);
      if (!source) return `Bad path "${p}": the file is not a document this server converts (${file.mimeType}).`;
      const allowed = targetsOf(source);
      if (!allowed.includes(target.format)) return `Bad path "${p}": a ${source.name} document can't be converted to ${target.format} (supported: ${allowed.join(', ')}).`;
    } else if (!file.mimeType.startsWith('video/') && !file.contentInfo?.video) {
      return `Bad path "${p}": the file is not a video (${file.mimeType}).`;
    }
    return { file, target: parsed.target };
  }

  /** `token` as the route parsed it (a number); `uuid` below is canonical. */
  async status(kind: ConversionKind, projectId: number, token: number): Promise<StatusJson> {
    const row = await this.repo.get(token);
    if (!row || row.project_id !== projectId || row.kind !== kind) throw restErrors.notFound();
    const result: StatusJson['result'] = { uuid: row.result_uuid };
    if (kind === 'video' && row.group_uuid) result.thumbnails_group_uuid = `${row.group_uuid}~${row.group_count}`;
    return { status: row.status, error: row.error, result };
  }

  async documentInfo(projectId: number, uuid: string): Promise<DocumentInfoJson> {
    const file = await this.ctx.files.find(projectId, uuid);
    if (!file || file.removedUs !== null) throw restErrors.notFound();
    const source = sourceDocument(file);
    if (!source) throw restErrors.notConvertible(file.mimeType);
    const groups: Record<string, string> = {};
    for (const row of await this.repo.groupsOf(projectId, file.uuid)) {
      const target = JSON.parse(row.target) as DocumentTarget;
      groups[target.format] = `${row.group_uuid}~${row.group_count}`;
    }
    return { error: null, format: { name: source.name, conversion_formats: targetsOf(source).map((name) => ({ name })), converted_groups: groups }, converted_groups: groups };
  }

  /**
   * The result file of a CDN conversion URL: the newest finished conversion of the file to the same
   * target. Null when the file is unknown or nothing matching has been converted (yet).
   */
  async resultFor(kind: ConversionKind, uuid: string, path: string): Promise<{ source: FileRecord; result: FileRecord | null } | null> {
    const source = await this.ctx.files.byUuid(uuid);
    if (!source || source.removedUs !== null) return null;
    const parsed = kind === 'document' ? parseDocumentPath(path) : parseVideoPath(path);
    if (!parsed.ok) throw cdnErrors.invalidUrl(parsed.problem);
    const row = await this.repo.finishedFor(source.projectId, source.uuid, kind, JSON.stringify(parsed.target));
    const result = row ? await this.ctx.files.find(source.projectId, row.result_uuid) : null;
    return { source, result: result && result.removedUs === null ? result : null };
  }

  /** Job body of both kinds. Idempotent: a finished or failed row is left alone. */
  async run(kind: ConversionKind, token: number, job: ClaimedJob): Promise<void> {
    const row = await this.repo.get(token);
    if (!row || row.status === 'finished' || row.status === 'failed') return;
    await this.repo.setStatus(token, 'processing');
    try {
      await this.convert(kind, row);
    } catch (err) {
      if (err instanceof ToolError && err.inputFault) {
        await this.repo.setStatus(token, 'failed', err.message);
        return;
      }
      // Our side failed (store, database, a missing tool): retried; the last attempt reports it.
      if (job.attempt >= job.maxAttempts) await this.repo.setStatus(token, 'failed', `Conversion failed: ${(err as Error).message}`);
      throw err;
    }
  }

  private async convert(kind: ConversionKind, row: ConversionRow): Promise<void> {
    const file = await this.ctx.files.find(row.project_id, row.source_uuid);
    const project = await this.ctx.projects.byId(row.project_id);
    if (!file || file.removedUs !== null || !file.blobKey || !project) throw new ToolError('The source file was removed.', true);
    const timeoutMs = kind === 'document' ? this.ctx.config.convertDocumentTimeoutMs : this.ctx.config.convertVideoTimeoutMs;
    const deadline = Date.now() + timeoutMs;
    await fsp.mkdir(this.workRoot, { recursive: true });
    const workDir = await fsp.mkdtemp(path.join(this.workRoot, `${kind}-${row.id}-`));
    const local = await openLocal(this.ctx.blobs, file.blobKey);
    try {
      const initiator: Initiator = { type: 'addon', detail: { request_id: null, addon_name: ADDON_NAME[kind], source_file_uuid: file.uuid } };
      const save = async (out: ConvertedFile, uuid: string, name: string): Promise<void> => {
        // Ingested already by an attempt that died before finishing the row.
        if (await this.ctx.files.find(row.project_id, uuid)) return;
        await this.ctx.files.ingest(project, fs.createReadStream(out.path), {
          uuid, originalFilename: name, declaredType: out.contentType, store: row.store === 'auto' ? 'auto' : row.store === '1',
          metadata: {}, maxBytes: this.ctx.config.maxUploadBytes, onTooLarge: () => new ToolError('The converted file is too large to keep.', true), initiator,
        });
      };
      const stem = stemOf(file.originalFilename);
      if (kind === 'document') {
        const target = JSON.parse(row.target) as DocumentTarget;
        const allPages = row.save_in_group === 1 && isImageTarget(target.format);
        const outputs = await convertDocument({ input: local.path, source: sourceDocument(file)!, target, allPages, workDir, deadline });
        const uuids = outputs.map((_, i) => (i === 0 ? row.result_uuid : newUuid()));
        for (const [i, out] of outputs.entries()) await save(out, uuids[i]!, out.page !== null && allPages ? `${stem}-${out.page}.${out.ext}` : `${stem}.${out.ext}`);
        const group = allPages ? await this.makeGroup(row.project_id, uuids) : null;
        await this.repo.finish(row.id, group ? { uuid: group.split('~')[0]!, count: uuids.length } : null);
      } else {
        const target = JSON.parse(row.target) as VideoTarget;
        const { video, thumbs } = await convertVideo({ input: local.path, target, workDir, deadline });
        await save(video, row.result_uuid, `${stem}.${video.ext}`);
        const thumbUuids: string[] = [];
        for (const t of thumbs) {
          const uuid = newUuid();
          await save(t, uuid, `${stem}-${t.page}.jpg`);
          thumbUuids.push(uuid);
        }
        if (row.group_uuid) await this.makeGroup(row.project_id, thumbUuids, row.group_uuid);
        await this.repo.finish(row.id, null);
      }
    } finally {
      await local.release();
      await fsp.rm(workDir, { recursive: true, force: true });
    }
  }
}

function stemOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return (dot > 0 ? name.slice(0, dot) : name) || 'file';
}

/**
 * Render a stored file: the one way a file's bytes go through the image pipeline. Processed CDN
 * delivery, group `nth` (through the same delivery) and copies with operations all come here, so
 * the rules below hold for each: only images are processed, overlays come from the same project
 * only (live files that are images), and every source opened for the render (the file, its
 * overlays, temporary copies included) is released when it ends, whatever the outcome.
 */
import type { FileRecord } from '../core/file-record.js';
import type { Plan } from '../media/plan.js';
import { startRender, type RenderResult, type RenderRun } from '../media/render.js';
import type { OpenedSource, StoredSources } from './source-file.js';
import { cdnErrors, imageErrors } from '../core/error-catalogue/media.js';

/** File rows by uuid (the file service). */
export interface FileRows {
  byUuid(uuid: string): Promise<FileRecord | null>;
}

export class StoredFileRenderer {
  constructor(
    private readonly files: FileRows,
    private readonly sources: StoredSources,
    /** The data dir's temporary area: a render's scratch images (media/pipeline/scratch.ts). */
    private readonly scratchDir: string,
    /** Wall-clock bound of one render (STOWAGE_CDN_RENDER_TIMEOUT_MS); the media default when absent. */
    private readonly timeoutMs?: number,
  ) {}

  /** Renders and answers by the render's deadline. */
  render(file: FileRecord, plan: Plan, opts: { accept?: string } = {}): Promise<RenderResult> {
    return this.start(file, plan, opts).answer;
  }

  /**
   * Starts a render. `ended` settles once the work has really stopped and every source it opened
   * is released: after a deadline answer, libvips may still be reading them.
   */
  start(file: FileRecord, plan: Plan, opts: { accept?: string } = {}): RenderRun {
    assertRenderable(file);
    const opened: OpenedSource[] = [];
    const open = async (f: FileRecord): Promise<OpenedSource> => {
      const source = await this.sources.open(f, { needsPath: plan.video !== null });
      opened.push(source);
      return source;
    };
    const releaseAll = async (): Promise<void> => {
      for (const source of opened.splice(0)) await source.release().catch(() => undefined);
    };
    const run = open(file).then((source) => startRender(source, plan, {
      fileId: file.uuid,
      accept: opts.accept,
      scratchDir: this.scratchDir,
      ...(this.timeoutMs !== undefined && { timeoutMs: this.timeoutMs }),
      loadOverlay: async (uuid) => {
        const overlay = await this.overlay(file, uuid);
        return overlay ? open(overlay) : null;
      },
    }));
    const ended = run.then((r) => r.ended, () => undefined).then(releaseAll);
    return { answer: run.then((r) => r.answer), ended };
  }

  /** An overlay is a live image of the base file's own project, or nothing. */
  private async overlay(base: FileRecord, uuid: string): Promise<FileRecord | null> {
    const other = await this.files.byUuid(uuid);
    if (!other || other.projectId !== base.projectId || other.removedUs !== null || !other.blobKey || !other.isImage) return null;
    return other;
  }
}

/** Only stored images are processed (also checked before a cached rendition is answered). */
export function assertRenderable(file: FileRecord): void {
  if (!file.blobKey) throw cdnErrors.fileNotFound();
  if (!file.isImage) throw imageErrors.notAnImage();
}

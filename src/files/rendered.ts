/**
 * Answers rendered once per file record and variant (API version, extras): the REST info route
 * gets the very same record object from the node's cache (record-cache.ts) until the file changes,
 * and the list the same record for a row read again unchanged (list/record-versions.ts), so
 * rendering again would produce the same bytes. Keyed weakly by the record: an answer lives only as
 * long as its record, and a changed file is a new record.
 */
import type { FileRecord } from '../core/file-record.js';

export class RenderedPerRecord<R = Buffer> {
  private readonly answers = new WeakMap<Readonly<FileRecord>, Map<string, R>>();

  get(file: Readonly<FileRecord>, variant: string, render: () => R): R {
    let byVariant = this.answers.get(file);
    if (byVariant === undefined) this.answers.set(file, (byVariant = new Map()));
    let rendered = byVariant.get(variant);
    if (rendered === undefined) byVariant.set(variant, (rendered = render()));
    return rendered;
  }
}

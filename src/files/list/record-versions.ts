/**
 * The list's rows as records, the same frozen record object for a row read again with every column
 * unchanged: the REST list renders each file once per record (rendered.ts, keyed by the record
 * object), so a page read again renders only the files that changed since.
 *
 * Why: rendering a page's files (their JSON columns parsed, three times formatted, the object
 * stringified) was most of a 100-file list's CPU, and a page is read far more often than its files
 * change (docs/performance.md).
 *
 * Never stale: every row is still read from the store, and a record is reused only when each
 * column the row holds is equal (===) to the one it was made from; a record is a function of its
 * row alone (toRecord). Bounded by clearing, like the node's other caches.
 */
import type { FileRecord } from '../../core/file-record.js';
import { FILE_COLUMNS, toRecord, type FileRow } from '../file-row.js';
import { deepFreeze } from '../record-cache.js';

interface Version {
  row: FileRow;
  record: FileRecord;
}

export class RecordVersions {
  private readonly byUuid = new Map<string, Version>();

  constructor(private readonly maxEntries = 2000) {}

  /** The record of `row`: the one made last time when no column changed, else a new one. */
  of(row: FileRow): FileRecord {
    const known = this.byUuid.get(row.uuid);
    if (known !== undefined && sameColumns(known.row, row)) return known.record;
    const record = deepFreeze(toRecord(row));
    if (this.byUuid.size >= this.maxEntries) this.byUuid.clear();
    this.byUuid.set(row.uuid, { row, record });
    return record;
  }
}

function sameColumns(a: FileRow, b: FileRow): boolean {
  for (const c of FILE_COLUMNS) if (a[c] !== b[c]) return false;
  return true;
}

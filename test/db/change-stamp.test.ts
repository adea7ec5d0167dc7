/**
 * The SQLite change stamp (src/db/change-stamp.ts) on real database files, with a second connection
 * standing for another process: equal stamps mean nothing changed; any change this connection
 * makes (before its commit too) or another one commits moves it. In WAL mode (the store's) it reads
 * the WAL-index header; without one (a rollback-journal database) `PRAGMA data_version` stands in.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { sqliteChangeStamp, type ChangeStamp } from '../../src/db/change-stamp.js';

const open: Array<{ close(): void }> = [];
afterEach(() => {
  for (const o of open.splice(0).reverse()) o.close();
});

function database(journal: 'wal' | 'delete'): { file: SQLite.Database; other: SQLite.Database; stamp: ChangeStamp } {
  const name = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-stamp-')), 'store.sqlite');
  const file = new SQLite(name);
  file.pragma(`journal_mode = ${journal}`);
  file.exec('create table t (a integer)');
  const stamp = sqliteChangeStamp(file);
  const other = new SQLite(name);
  other.pragma('busy_timeout = 5000');
  open.push(file, other, stamp);
  return { file, other, stamp };
}

describe.each(['wal', 'delete'] as const)('the SQLite change stamp (journal_mode %s)', (journal) => {
  it('holds while nothing changes, reads included', () => {
    const { file, other, stamp } = database(journal);
    const before = stamp.read();
    expect(before).not.toBeNull();
    file.prepare('select count(*) from t').get();
    other.prepare('select count(*) from t').get();
    expect(stamp.read()).toBe(before);
  });

  it('moves when another connection commits, and stays moved', () => {
    const { other, stamp } = database(journal);
    const before = stamp.read();
    other.prepare('insert into t values (1)').run();
    const after = stamp.read();
    expect(after).not.toBe(before);
    expect(stamp.read()).toBe(after);
    other.prepare('update t set a = 2').run();
    expect(stamp.read()).not.toBe(after);
  });

  it('moves with this connection\'s own changes, each statement of an open transaction too', () => {
    const { file, stamp } = database(journal);
    const before = stamp.read();
    file.exec('begin immediate');
    file.prepare('insert into t values (1)').run();
    const inside = stamp.read();
    expect(inside).not.toBe(before);
    file.prepare('insert into t values (2)').run();
    expect(stamp.read()).not.toBe(inside);
    file.exec('commit');
    expect(stamp.read()).not.toBe(before);
  });
});

it('in WAL mode, reads the WAL-index header (the -shm file) rather than the pragma', () => {
  const { stamp } = database('wal');
  expect(stamp.read()).not.toMatch(/:v\d+$/);
  expect(database('delete').stamp.read()).toMatch(/^\d+:v\d+$/);
});

/**
 * Every error a route answers is named once in src/core/error-catalogue/ (status, code, message).
 * These checks read the source: an AppError built with a literal status or code outside the
 * catalogue is an ad-hoc error, and fails here. (src/s3/ keeps its own S3 XML error table.)
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { adminErrors } from '../src/core/error-catalogue/admin.js';
import { commonErrors } from '../src/core/error-catalogue/common.js';
import { catalogueEntries } from '../src/core/error-catalogue/define.js';
import { downloadErrors, urlErrors } from '../src/core/error-catalogue/download.js';
import { metadataErrors, tagErrors } from '../src/core/error-catalogue/fields.js';
import { cdnErrors, imageErrors } from '../src/core/error-catalogue/media.js';
import { restErrors } from '../src/core/error-catalogue/rest.js';
import { tusCatalogue } from '../src/core/error-catalogue/tus.js';
import { uploadErrors } from '../src/core/error-catalogue/upload.js';

const SRC = path.resolve(__dirname, '../src');
const CATALOGUE = 'core/error-catalogue/';
const OWN_TABLES = ['s3/'];

function sources(dir = SRC): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    return e.isDirectory() ? sources(full) : e.name.endsWith('.ts') ? [full] : [];
  });
}

/** `new AppError(` or `new BodyError(` whose status or code is written out: a literal number or string. */
const AD_HOC = /new\s+(AppError|BodyError)\s*\(\s*(\d|['"`]|[\w.]+\s*,\s*['"`])/g;

/** The ad-hoc constructions in one file's text, as `line: excerpt`. */
function adHocErrors(text: string): string[] {
  const stripped = text.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' ')).replace(/\/\/.*$/gm, '');
  return [...stripped.matchAll(AD_HOC)].map((m) => `${stripped.slice(0, m.index).split('\n').length}: ${m[0]}`);
}

describe('the error catalogue', () => {
  it('catches an ad-hoc error and lets a named one or a pass-through go', () => {
    expect(adHocErrors("throw new AppError(404, 'NotFound', 'Not found.');")).toHaveLength(1);
    expect(adHocErrors("throw new AppError(\n  400,\n  'Bad', msg);")).toHaveLength(1);
    expect(adHocErrors("return new AppError(status, 'BaseViewsError', 'x');")).toHaveLength(1);
    expect(adHocErrors("throw new BodyError(400, 'BadRequest', body);")).toHaveLength(1);
    expect(adHocErrors('throw restErrors.notFound();')).toEqual([]);
    expect(adHocErrors('throw new AppError(err.status, err.code, err.message, headers);')).toEqual([]);
    expect(adHocErrors("// new AppError(404, 'x', 'y') in a comment")).toEqual([]);
  });

  it('no file outside the catalogue builds an error with a literal status or code', () => {
    const offenders: string[] = [];
    for (const file of sources()) {
      const rel = path.relative(SRC, file).split(path.sep).join('/');
      if (rel.startsWith(CATALOGUE) || OWN_TABLES.some((t) => rel.startsWith(t))) continue;
      for (const hit of adHocErrors(fs.readFileSync(file, 'utf8'))) offenders.push(`${rel}:${hit}`);
    }
    expect(offenders).toEqual([]);
  });

  it('gives each code one status', () => {
    // Loaded so that every entry is defined.
    expect([adminErrors, commonErrors, downloadErrors, urlErrors, metadataErrors, tagErrors, cdnErrors, imageErrors, restErrors, tusCatalogue, uploadErrors]).toHaveLength(11);
    const statuses = new Map<string, Set<number>>();
    for (const e of catalogueEntries) (statuses.get(e.code) ?? statuses.set(e.code, new Set()).get(e.code)!).add(e.status);
    const mixed = [...statuses].filter(([, s]) => s.size > 1).map(([code, s]) => `${code}: ${[...s].join(', ')}`);
    expect(mixed).toEqual([]);
  });

  it('builds an entry with its status, code, message and headers', () => {
    const e = uploadErrors.multipartCompletionInProgress(0);
    expect([e.status, e.code, e.message, e.headers]).toEqual([
      503,
      'MultipartFileCompletionInProgressError',
      'File is being assembled by another request. Try again later.',
      { 'retry-after': '1' },
    ]);
    expect(restErrors.batchTooLong(100).message).toBe('Maximum UUIDs per request is exceeded. The limit is 100');
  });
});

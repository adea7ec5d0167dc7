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
import { addonParamErrors, restFieldErrors } from '../src/core/error-catalogue/rest-fields.js';
import { tusCatalogue } from '../src/core/error-catalogue/tus.js';
import { uploadErrors } from '../src/core/error-catalogue/upload.js';

const SRC = path.resolve(__dirname, '../src');
const CATALOGUE = 'core/error-catalogue/';
const OWN_TABLES = ['s3/'];
/**
 * Entries that carry a message worded elsewhere, and the one place each may be called from: the
 * surface seams, which answer a route schema's own message. Every other check names its entry.
 */
const PASS_THROUGH: Record<string, string> = {
  'restErrors.invalid': 'http/rest/route.ts',
  'uploadErrors.invalid': 'http/upload/route.ts',
};

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

  it('lets only the surface seams pass a message through', () => {
    const offenders: string[] = [];
    for (const file of sources()) {
      const rel = path.relative(SRC, file).split(path.sep).join('/');
      if (rel.startsWith(CATALOGUE)) continue;
      const text = fs.readFileSync(file, 'utf8');
      for (const [entry, seam] of Object.entries(PASS_THROUGH)) {
        if (rel !== seam && new RegExp(`\\b${entry.replace('.', '\\.')}\\b`).test(text)) offenders.push(`${rel}: ${entry}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it('gives each code one status', () => {
    // Loaded so that every entry is defined.
    const modules = [adminErrors, commonErrors, downloadErrors, urlErrors, metadataErrors, tagErrors, cdnErrors, imageErrors, restErrors, restFieldErrors, addonParamErrors, tusCatalogue, uploadErrors];
    expect(modules).toHaveLength(13);
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

  // The SDK suites compare these texts; several are answered by no test request, so they are pinned here.
  it('words the REST field checks as the wire does', () => {
    const said = (e: Error & { status?: number; code?: string }) => `${e.status} ${e.code} ${e.message}`;
    expect(
      [
        restFieldErrors.notTrueOrFalse('removed'),
        restFieldErrors.limitOutOfRange(1000),
        restFieldErrors.orderingNotField('datetime_created'),
        restFieldErrors.orderingNotOneOf(['datetime_uploaded', 'size']),
        restFieldErrors.includeNotAllowed('include', ['appdata']),
        restFieldErrors.paramNotTrueOrFalse('store'),
        restFieldErrors.pathsTooMany(100),
        restFieldErrors.sourceInvalid(),
        restFieldErrors.tooLong(255),
        restFieldErrors.notAChoice(3),
        restErrors.publicKeyNotFound('demo'),
        restErrors.credentialsIncorrect(),
      ].map(said),
    ).toEqual([
      '400 BadRequest `removed` must be true or false.',
      '400 BadRequest `limit` must be an integer from 1 to 1000.',
      '400 BadRequest `ordering` must be datetime_created or -datetime_created.',
      '400 BadRequest `ordering` must be one of datetime_uploaded, -datetime_uploaded, size, -size.',
      '400 BadRequest `include` accepts only: appdata.',
      '400 BadRequest `store` parameter should be `true` or `false`.',
      '400 BadRequest “paths” parameter has more than 100 paths.',
      '400 BadRequest Bad `source` parameter. Use UUID or CDN URL.',
      '400 BadRequest Ensure this field has no more than 255 characters.',
      '400 BadRequest "3" is not a valid choice.',
      '401 Unauthorized Public key demo not found.',
      '401 Unauthorized Incorrect authentication credentials.',
    ]);
  });

  it('words the tag and add-on parameter checks as the wire does', () => {
    const said = (e: Error & { status?: number; code?: string }) => `${e.status} ${e.code} ${e.message}`;
    expect(
      [
        tagErrors.tooLong('x'.repeat(100), 64),
        tagErrors.forbidden('a,b'),
        tagErrors.notList('add'),
        tagErrors.tooMany(50),
        addonParamErrors.notOneOf('type_level', ['none', '1']),
        addonParamErrors.notLength('roi', '3em'),
        addonParamErrors.positionInvalid(),
      ].map(said),
    ).toEqual([
      `400 FileTagsInvalidError A tag can not be longer than 64 characters: \`${'x'.repeat(80)}\`.`,
      '400 FileTagsInvalidError Tag `a,b` contains a comma or a control character.',
      '400 FileTagsInvalidError `add` must be an array of strings.',
      '400 FileTagsInvalidError A file can not have more than 50 tags.',
      '400 InvalidAddonParams `params.type_level` must be one of none, 1.',
      '400 InvalidAddonParams `params.roi` must be a length in px or % (e.g. "30px" or "10%"), got "3em".',
      '400 InvalidAddonParams `params.position` must be "original", "center", "N%" or "N% M%".',
    ]);
  });
});

/**
 * The layout rules of docs/architecture.md that a reviewer would otherwise have to re-check by
 * hand on every change:
 *   - SQL lives only in src/db/, in the repositories (a file named repo.ts) and in the job queue's
 *     own store (src/jobs/queue.ts and its parts in src/jobs/queue/: `enqueue` runs inside its
 *     callers' transactions). Everything else reaches the store through a service, and opens
 *     transactions with `Db.transaction`.
 *   - Route modules get services: they never import a repository or src/db/, nor use `ctx.db`.
 *   - src/http/ imports no feature folder (only itself, the kernel and the top-level types).
 *   - No two folders of src/ import each other, directly or around a loop (arrows point down),
 *     type-only imports included: the context every feature names (src/context.ts) carries the
 *     file service as the contract declared below it (src/file-contract.ts), not as FileService.
 * The checks read the source text; the first tests below prove each check catches an offender.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(__dirname, '../src');

/** Folders under src/ that are not features: http/ may import these. */
const KERNEL = new Set(['core', 'db', 'jobs', 'blobs', 'digests', 'writes', 'launcher', 'net', 'auth', 'media', 'throttle', 'projects']);

/** Where queries may be written (paths relative to src/, with forward slashes). */
function mayHoldSql(rel: string): boolean {
  return rel.startsWith('db/') || rel === 'repo.ts' || rel.endsWith('/repo.ts') || rel === 'jobs/queue.ts' || rel.startsWith('jobs/queue/');
}

const QUERY_PATTERNS: Array<[RegExp, string]> = [
  [/\.kysely\b/, 'uses the raw Kysely handle (`.kysely`)'],
  [/\.(selectFrom|insertInto|updateTable|deleteFrom|replaceInto|mergeInto|selectNoFrom)\s*\(/, 'builds a query'],
  [/\bsql\s*(<[^>]*>)?\s*`|\bsql\.(raw|ref|table|id|lit|join|val)\s*\(/, 'writes raw SQL'],
  [/\.transaction\(\s*\)/, "opens a Kysely transaction (use the Db's transaction(fn))"],
  [/^\s*import\s+(?!type\b)[^;]*\bfrom\s+['"]kysely['"]/m, "imports Kysely values (only `import type` is allowed)"],
];

/** Source text without comments, so prose about queries is not mistaken for one. */
function code(text: string): string {
  return text
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .split('\n')
    .filter((line) => !line.trim().startsWith('//'))
    .join('\n');
}

function sqlProblems(rel: string, text: string): string[] {
  if (mayHoldSql(rel)) return [];
  const body = code(text);
  return QUERY_PATTERNS.filter(([re]) => re.test(body)).map(([, what]) => `${rel} ${what}`);
}

/** Every module specifier a file imports or re-exports (static and dynamic). */
function specifiers(text: string): string[] {
  const body = code(text);
  return [...new Set([...body.matchAll(/\b(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)].map((m) => m[1] as string))];
}

/** The src/-relative path an import of `rel` points at, or null for a package. */
function resolved(rel: string, spec: string): string | null {
  if (!spec.startsWith('.')) return null;
  return path.posix.normalize(path.posix.join(path.posix.dirname(rel), spec));
}

function httpProblems(rel: string, text: string): string[] {
  if (!rel.startsWith('http/')) return [];
  return specifiers(text)
    .map((spec) => resolved(rel, spec))
    .filter((target): target is string => target !== null && target.includes('/'))
    .filter((target) => {
      const top = target.split('/')[0] as string;
      return top !== 'http' && !KERNEL.has(top);
    })
    .map((target) => `${rel} imports the feature module ${target}`);
}

/** Folders that are not features: the kernel, the servers, the commands and the configuration. */
const NOT_FEATURES = new Set([...KERNEL, 'http', 'cli', 'import', 'doctor', 'config']);

/**
 * The src/http/ modules a feature may import: the route seams and the helpers every feature shares
 * (CONTRIBUTING.md, "Adding a REST or Upload route"). Never a server module.
 */
const FEATURE_HTTP_MODULES = new Set([
  'http/common/route.js', 'http/common/json.js', 'http/common/openapi/wire-schemas.js', 'http/common/trust.js', 'http/common/disk-space.js', 'http/common/request-id.js',
  'http/rest/route.js', 'http/rest/query.js', 'http/rest/pagination.js', 'http/rest/version.js', 'http/rest/session-header.js',
  'http/upload/route.js', 'http/upload/params.js', 'http/upload/fields.js', 'http/upload/errors.js', 'http/upload/limits.js', 'http/upload/request-flow.js',
  'http/cdn/errors.js', 'http/cdn/headers.js', 'http/cdn/file-ref.js', 'http/cdn/access.js',
  'http/s3/errors.js',
]);

function featureHttpProblems(rel: string, text: string): string[] {
  if (!rel.includes('/') || NOT_FEATURES.has(folderOf(rel))) return [];
  return specifiers(text)
    .map((spec) => resolved(rel, spec))
    .filter((target): target is string => target !== null && target.startsWith('http/') && !FEATURE_HTTP_MODULES.has(target))
    .map((target) => `${rel} imports ${target}: not one of the http/ modules features share (FEATURE_HTTP_MODULES in test/architecture.test.ts)`);
}

/** A module that registers routes on a Fastify instance. */
function isRouteModule(text: string): boolean {
  // Plain Fastify registrations, or described routes (src/http/common/route.ts, docs/openapi.md).
  return /\bapp\.(get|post|put|delete|patch|head|route|all)\s*\(|\b(restRoute|uploadRoute)\s*\(\s*app\b/.test(code(text));
}

function routeProblems(rel: string, text: string): string[] {
  if (!isRouteModule(text)) return [];
  const problems = specifiers(text)
    .map((spec) => resolved(rel, spec))
    .filter((target): target is string => target !== null && (target.startsWith('db/') || /(^|\/)repo\.js$/.test(target)))
    .map((target) => `route module ${rel} imports ${target} (routes get services)`);
  if (/\bctx\.db\b/.test(code(text))) problems.push(`route module ${rel} uses ctx.db (routes get services)`);
  return problems;
}

/** The folder (first path segment under src/) a module belongs to; top-level files are their own. */
/** The longest a source file may grow before it is split by concern. */
const MAX_FILE_LINES = 320;

const folderOf = (rel: string): string => rel.split('/')[0] as string;

/** Folder -> folders it imports (types included), from every file's relative imports. */
function folderGraph(sources: Array<{ rel: string; text: string }>): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const { rel, text } of sources) {
    for (const target of specifiers(text).map((spec) => resolved(rel, spec))) {
      if (target === null || folderOf(target) === folderOf(rel)) continue;
      const out = graph.get(folderOf(rel)) ?? new Set<string>();
      graph.set(folderOf(rel), out.add(folderOf(target.replace(/\.js$/, '.ts'))));
    }
  }
  return graph;
}

/** Each loop of folders, as the path that closes it (e.g. ['core', 'jobs', 'core']). */
function folderCycles(graph: Map<string, Set<string>>): string[][] {
  const cycles: string[][] = [];
  const walk = (start: string, at: string, path: string[], seen: Set<string>): void => {
    for (const next of graph.get(at) ?? []) {
      if (next === start) cycles.push([...path, next]);
      else if (!seen.has(next) && next > start) walk(start, next, [...path, next], new Set(seen).add(next));
    }
  };
  for (const start of [...graph.keys()].sort()) walk(start, start, [start], new Set([start]));
  return cycles;
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(full);
    return e.name.endsWith('.ts') ? [full] : [];
  });
}

const files = sourceFiles(SRC).map((full) => ({ rel: path.relative(SRC, full).split(path.sep).join('/'), text: fs.readFileSync(full, 'utf8') }));

describe('the checks catch what they look for', () => {
  it('queries outside repositories', () => {
    expect(sqlProblems('groups/service.ts', "const r = await this.ctx.db.kysely.selectFrom('x').selectAll().execute();")).toHaveLength(2);
    expect(sqlProblems('files/service.ts', "await trx.updateTable('files').set(p).execute();")).toEqual(['files/service.ts builds a query']);
    expect(sqlProblems('http/common/health.ts', "import { sql } from 'kysely';\nawait sql`select 1`.execute(db);")).toHaveLength(2);
    expect(sqlProblems('webhooks/dispatch.ts', 'await db.transaction().execute(async (trx) => run(trx));')).toHaveLength(1);
    expect(sqlProblems('files/repo.ts', "await this.db.selectFrom('files').selectAll().execute();")).toEqual([]);
    expect(sqlProblems('uploads/multipart/repo.ts', "await this.db.deleteFrom('multipart_uploads').execute();")).toEqual([]);
    expect(sqlProblems('db/token-usage.ts', "import { sql } from 'kysely';")).toEqual([]);
    expect(sqlProblems('files/service.ts', "import type { Kysely } from 'kysely';\nawait this.db.transaction(async (trx) => repo.insert(trx, row));\n// .selectFrom( in a comment")).toEqual([]);
  });

  it('http/ importing a feature', () => {
    expect(httpProblems('http/upload/params.ts', "import type { StoreChoice } from '../../files/service.js';")).toEqual(['http/upload/params.ts imports the feature module files/service.js']);
    expect(httpProblems('http/cdn/server.ts', "const m = await import('../../delivery/raw.js');")).toHaveLength(1);
    expect(httpProblems('http/rest/server.ts', "import { AppError } from '../../core/errors.js';\nimport type { AppContext } from '../../context.js';\nimport { x } from '../common/json.js';\nimport Fastify from 'fastify';")).toEqual([]);
    expect(httpProblems('groups/rest.ts', "import { sendJson } from '../http/common/json.js';")).toEqual([]);
  });

  it('a feature importing an http/ module outside the shared ones', () => {
    expect(featureHttpProblems('groups/rest.ts', "import { sendJson } from '../http/common/json.js';\nimport { restRoute } from '../http/rest/route.js';")).toEqual([]);
    expect(featureHttpProblems('groups/rest.ts', "import { buildRestServer } from '../http/rest/server.js';")).toHaveLength(1);
    expect(featureHttpProblems('files/list/batched/repo.ts', "import type { X } from '../../../http/upload/server.js';")).toHaveLength(1);
    expect(featureHttpProblems('app.ts', "import { buildRestServer } from './http/rest/server.js';")).toEqual([]);
    expect(featureHttpProblems('media/render.ts', "import { x } from '../http/cdn/server.js';")).toEqual([]);
  });

  it('route modules holding repositories or the raw handle', () => {
    const route = (body: string) => `export function routes(ctx) { return async (app) => { app.get('/x/', async () => ${body}); }; }`;
    expect(routeProblems('webhooks/rest.ts', `import type { WebhookRepo } from './repo.js';\n${route('1')}`)).toHaveLength(1);
    expect(routeProblems('copies/rest.ts', `import { ProjectRepo } from '../db/projects.js';\n${route('1')}`)).toHaveLength(1);
    expect(routeProblems('files/rest-files.ts', route('ctx.db.transaction(f)'))).toHaveLength(1);
    expect(routeProblems('files/rest-files.ts', `import type { WebhookService } from './service.js';\n${route('ctx.files.count(q)')}`)).toEqual([]);
    expect(routeProblems('webhooks/feature.ts', "import { WebhookRepo } from './repo.js';")).toEqual([]);
  });
});

describe('the folder cycle check', () => {
  it('finds a loop of two and of three folders, type-only imports included, and none in a layered tree', () => {
    const two = [{ rel: 'core/a.ts', text: "import { b } from '../jobs/b.js';" }, { rel: 'jobs/b.ts', text: "import { type A, a } from '../core/a.js';" }];
    expect(folderCycles(folderGraph(two))).toEqual([['core', 'jobs', 'core']]);
    const typeOnly = [{ rel: 'core/a.ts', text: "import { b } from '../jobs/b.js';" }, { rel: 'jobs/b.ts', text: "import type { A } from '../core/a.js';" }];
    expect(folderCycles(folderGraph(typeOnly))).toEqual([['core', 'jobs', 'core']]);
    const three = [
      { rel: 'a/x.ts', text: "import '../b/y.js';" },
      { rel: 'b/y.ts', text: "import '../c/z.js';" },
      { rel: 'c/z.ts', text: "import '../a/x.js';" },
    ];
    expect(folderCycles(folderGraph(three))).toHaveLength(1);
    const layered = [{ rel: 'app.ts', text: "import './files/feature.js';" }, { rel: 'files/feature.ts', text: "import '../core/ids.js';" }];
    expect(folderCycles(folderGraph(layered))).toEqual([]);
  });
});

describe('src/ keeps the layout', () => {
  it('reads the source tree', () => {
    expect(files.length).toBeGreaterThan(50);
    expect(files.some((f) => f.rel === 'db/connect.ts')).toBe(true);
  });

  it('has SQL only in src/db/, repositories and the job queue', () => {
    expect(files.flatMap((f) => sqlProblems(f.rel, f.text))).toEqual([]);
  });

  it('has route modules that get services, never repositories or the raw handle', () => {
    expect(files.filter((f) => isRouteModule(f.text)).length).toBeGreaterThan(5);
    expect(files.flatMap((f) => routeProblems(f.rel, f.text))).toEqual([]);
  });

  it('has no source file over 320 lines (a longer one holds more than one concern)', () => {
    const long = files.map((f) => ({ rel: f.rel, lines: f.text.split('\n').length - (f.text.endsWith('\n') ? 1 : 0) })).filter((f) => f.lines > MAX_FILE_LINES);
    expect(long).toEqual([]);
  });

  it('has no loop between folders', () => {
    expect(folderCycles(folderGraph(files))).toEqual([]);
  });

  it('has features importing only the shared http/ modules', () => {
    expect(files.flatMap((f) => featureHttpProblems(f.rel, f.text))).toEqual([]);
  });

  it('has src/http/ importing no feature folder', () => {
    expect(files.filter((f) => f.rel.startsWith('http/')).length).toBeGreaterThan(5);
    expect(files.flatMap((f) => httpProblems(f.rel, f.text))).toEqual([]);
  });
});

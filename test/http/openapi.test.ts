/**
 * The OpenAPI documents (docs/openapi.md): `/openapi.json` on the REST and Upload surfaces is a
 * valid OpenAPI 3.1 document, every route either server registered (the catalog reads them from
 * Fastify's onRoute) is described in it, input that breaks a route's schema gets the same 400 as
 * before the schemas, and `/docs/` renders the operations from local assets only.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Validator } from '@seriousme/openapi-schema-validator';
import { chromium, type Browser, type Page } from 'playwright-core';
import { useServer } from '../helpers/use-server.js';
import { ROOT } from '../helpers/server.js';
import { request } from '../helpers/http.js';

const s = useServer();
const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = path.join(ROOT, 'test-artifacts', 'openapi');

type Operation = { summary?: string; 'x-stowage-undescribed'?: boolean; operationId: string };
type Doc = { openapi: string; paths: Record<string, Record<string, Operation>>; components: { securitySchemes: Record<string, unknown> } };

/**
 * Routes registered but not described yet, as `METHOD path`. Empty when every route is described;
 * a route added without a description makes the coverage test fail until it is described.
 */
const NOT_YET_DESCRIBED: Record<'rest' | 'upload', string[]> = {
  rest: [],
  upload: [],
};

async function documentOf(base: string): Promise<Doc> {
  const res = await request(`${base}/openapi.json`);
  expect(res.status, res.text).toBe(200);
  expect(res.headers.get('content-type')).toBe('application/json');
  return res.json as Doc;
}

const operations = (doc: Doc) =>
  Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ key: `${method.toUpperCase()} ${path}`, op })));

describe('OpenAPI documents', () => {
  for (const surface of ['rest', 'upload'] as const) {
    it(`${surface}: /openapi.json is a valid OpenAPI 3.1 document, served without credentials`, async () => {
      const doc = await documentOf(s[surface]);
      expect(doc.openapi).toBe('3.1.0');
      const validator = new Validator();
      const result = await validator.validate(structuredClone(doc) as unknown as object);
      expect(result.errors ?? [], JSON.stringify(result.errors, null, 1)?.slice(0, 4000)).toEqual([]);
      expect(result.valid).toBe(true);
      expect(validator.version).toBe('3.1');
    });

    it(`${surface}: every route the server registered is described, with its methods`, async () => {
      const doc = await documentOf(s[surface]);
      const undescribed = operations(doc).filter((o) => o.op['x-stowage-undescribed']).map((o) => o.key);
      expect(undescribed.sort()).toEqual([...NOT_YET_DESCRIBED[surface]].sort());
      for (const { key, op } of operations(doc)) if (!op['x-stowage-undescribed']) expect(op.summary, key).toMatch(/\w/);
      const ids = operations(doc).map((o) => o.op.operationId);
      expect(ids.length).toBeGreaterThan(8);
      expect(new Set(ids).size, 'operationIds are unique').toBe(ids.length);
    });
  }

  it('lists the REST routes with their methods and auth schemes', async () => {
    const doc = await documentOf(s.rest);
    const keys = operations(doc).map((o) => o.key);
    for (const k of ['GET /files/', 'GET /files/{uuid}/', 'PUT /files/{uuid}/storage/', 'DELETE /files/{uuid}/storage/', 'PUT /files/storage/', 'DELETE /files/storage/', 'GET /files/{uuid}/tags/', 'PUT /files/{uuid}/tags/', 'PATCH /files/{uuid}/tags/']) {
      expect(keys).toContain(k);
    }
    // The document's own routes are served but not listed; Fastify's HEAD twins of GETs are not operations.
    expect(keys.filter((k) => k.startsWith('HEAD ') || k.includes('/openapi.json') || k.includes('/docs'))).toEqual([]);
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['uploadcareSignature', 'uploadcareSimple']);
    const tags = doc.paths['/files/{uuid}/tags/']!['put'] as unknown as { security: unknown; parameters: Array<{ name: string; in: string; required: boolean }>; requestBody: { content: Record<string, { schema: { required?: string[] } }> } };
    expect(tags.security).toEqual([{ uploadcareSimple: [] }, { uploadcareSignature: [] }]);
    expect(tags.parameters).toEqual([expect.objectContaining({ name: 'uuid', in: 'path', required: true })]);
    expect(tags.requestBody.content['application/json']?.schema.required).toEqual(['tags']);
  });

  it('lists the Upload routes with the upload auth schemes', async () => {
    const doc = await documentOf(s.upload);
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['publicKey', 'signedUpload', 'uploadToken']);
    const keys = operations(doc).map((o) => o.key);
    for (const k of ['POST /base/', 'GET /info/', 'POST /from_url/', 'GET /from_url/status/', 'POST /multipart/start/', 'POST /multipart/complete/', 'POST /group/', 'GET /group/info/', 'POST /group/info/', 'POST /tus/', 'HEAD /tus/{id}', 'PATCH /tus/{id}']) {
      expect(keys).toContain(k);
    }
    const base = doc.paths['/base/']!['post'] as unknown as { security: unknown; requestBody: { content: Record<string, unknown> } };
    expect(base.security).toEqual([{ publicKey: [] }, { publicKey: [], signedUpload: [] }, { publicKey: [], uploadToken: [] }]);
    expect(Object.keys(base.requestBody.content)).toEqual(['multipart/form-data', 'application/x-www-form-urlencoded']);
    // The token is the credential of a from_url status.
    expect((doc.paths['/from_url/status/']!['get'] as unknown as { security: unknown }).security).toEqual([]);
  });
});

describe('input checked by the route schemas', () => {
  it('answers each bad input with its 400 and detail, after authentication', async () => {
    const uuid = await s.uploadFile('a.txt', 'a');
    const cases: Array<[string, string, string | undefined, string]> = [
      ['GET', '/files/?limit=0', undefined, '`limit` must be an integer from 1 to 1000.'],
      ['GET', '/files/?stored=maybe', undefined, '`stored` must be true or false.'],
      ['GET', '/files/?ordering=size', undefined, '`ordering` must be one of datetime_uploaded, -datetime_uploaded.'],
      ['GET', '/files/?from=yesterday', undefined, '`from` must be an ISO 8601 date-time such as 2024-01-01T00:00:00Z.'],
      ['GET', `/files/${uuid}/?include=everything`, undefined, '`include` accepts only: appdata.'],
      ['PUT', '/files/storage/', '[]', 'List of UUIDs can not be empty'],
      ['DELETE', '/files/storage/', '{"uuid": 1}', 'Expected list of UUIDs'],
      ['PUT', `/files/${uuid}/tags/`, '[1]', 'Expected a JSON object.'],
      ['PUT', `/files/${uuid}/tags/`, '{}', '`tags` is required: an array of strings (empty clears).'],
      ['PUT', `/files/${uuid}/metadata/k/`, '5', 'Metadata value must be a JSON string.'],
      ['PUT', `/files/${uuid}/metadata/k/`, '{', 'Request body is not valid JSON.'],
      ['GET', '/groups/?ordering=size', undefined, '`ordering` must be datetime_created or -datetime_created.'],
      ['POST', '/project/cdn_tokens/', '{"path": ""}', '`path` is required: a CDN path starting with a file UUID or group id, or a CDN URL.'],
      ['POST', '/project/cdn_tokens/', `{"path": "${uuid}/", "expire_in": 0}`, '`expire_in` must be an integer number of seconds from 1 to 31536000.'],
      ['POST', '/project/cdn_tokens/', `{"path": "${uuid}/", "wildcard": true, "exact_url": true}`, '`wildcard` and `exact_url` exclude each other.'],
      ['POST', '/convert/document/', '[]', 'Expected JSON object.'],
      ['POST', '/convert/video/', '{"paths": []}', '“paths” parameter is required.'],
      ['POST', '/convert/document/', `{"paths": ["${uuid}/document/-/format/pdf/"], "save_in_group": "maybe"}`, '`save_in_group` parameter should be `true` or `false`.'],
      ['GET', '/addons/uc_clamav_virus_scan/execute/status/', undefined, '`request_id` is required.'],
    ];
    for (const [method, path, body, detail] of cases) {
      const res = await s.call(method, path, body === undefined ? {} : { body });
      expect([res.status, res.json], `${method} ${path}`).toEqual([400, { detail }]);
    }
    // Not a webhook id: 404 before the body is looked at.
    expect((await s.call('PUT', '/webhooks/abc/', { body: '{"event": "nope"}' })).status).toBe(404);
    // A tag's own error keeps its message; the first bad field is the one reported.
    const res = await s.call('GET', '/files/?limit=5000&stored=maybe');
    expect(res.json).toEqual({ detail: '`stored` must be true or false.' });
    // Authentication still comes first: a bad query without credentials is a 401, not a 400.
    expect((await request(`${s.rest}/files/?limit=0`, { headers: { accept: 'application/vnd.uploadcare-v0.7+json' } })).status).toBe(401);
  });
});

type Param = { name: string; in: string; schema: Record<string, unknown> };
type BodyOp = { parameters?: Param[]; requestBody?: { content: Record<string, { schema: { properties: Record<string, Record<string, unknown>>; required?: string[] } }> } };

describe('REST routes whose handlers used to check their input by hand', () => {
  it('documents the fields their schemas validate', async () => {
    const doc = await documentOf(s.rest);
    const op = (path: string, method: string) => doc.paths[path]![method] as unknown as BodyOp;
    const bodyOf = (path: string, method = 'post') => op(path, method).requestBody!.content['application/json']!.schema;
    const paramOf = (path: string, name: string) => op(path, 'get').parameters?.find((p) => p.name === name)?.schema;

    expect(bodyOf('/webhooks/').required).toEqual(['target_url', 'event']);
    expect(bodyOf('/webhooks/').properties['event']!['enum']).toContain('file.uploaded');
    expect(bodyOf('/webhooks/{id}/', 'put').properties['is_active']!['type']).toBe('boolean');
    expect(bodyOf('/files/local_copy/').properties['store']!['type']).toBe('boolean');
    expect(bodyOf('/files/remote_copy/').required).toEqual(['source', 'target']);
    expect(op('/files/search/', 'post').parameters?.find((p) => p.name === 'limit')?.schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 100 });
    for (const name of ['removed', 'stored', 'limit', 'ordering', 'offset', 'include', 'tags', 'from', 'to']) expect(paramOf('/files/', name), name).toBeDefined();
    expect(paramOf('/files/{uuid}/', 'include')).toBeDefined();
    for (const name of ['limit', 'ordering', 'from', 'to', 'offset']) expect(paramOf('/groups/', name), name).toBeDefined();
    expect(paramOf('/webhooks/{id}/deliveries/', 'before')).toMatchObject({ type: 'integer' });
  });

  it('answer bad values with their documented status and body', async () => {
    const uuid = await s.uploadFile('b.txt', 'b');
    const other = '00000000-0000-4000-8000-000000000000';
    const cases: Array<[string, string, string, unknown]> = [
      ['POST', '/webhooks/', '{"target_url": "ftp://x", "event": "nope", "is_active": "maybe"}', { target_url: ['Enter a valid URL.'], event: ['"nope" is not a valid choice.'], is_active: ['Must be a valid boolean.'] }],
      // A missing required field answers alone, whatever else is wrong.
      ['POST', '/webhooks/', '{"event": "nope", "signing_secret": 5}', { detail: '`target_url` is missing.' }],
      ['POST', '/webhooks/', '{"target_url": "https://example.com/h"}', { detail: '`event` is missing.' }],
      ['PUT', '/webhooks/1/', '{"version": "9", "signing_secret": "\\u0001"}', { signing_secret: ['Control characters are not allowed.'], version: ['"9" is not a valid choice.'] }],
      ['POST', '/webhooks/unsubscribe/', '{"event": ""}', { detail: '`target_url` is missing.' }],
      ['POST', '/files/local_copy/', `{"source": "${uuid}", "store": "maybe"}`, { detail: '`store` parameter should be `true` or `false`.' }],
      ['POST', '/files/local_copy/', `{"source": "${uuid}", "metadata": "x"}`, { detail: '`metadata` must be an object of string keys to string values.' }],
      // The source is looked up before the other fields are checked.
      ['POST', '/files/local_copy/', `{"source": "${other}", "store": "maybe"}`, { detail: 'Bad `source` parameter. Use UUID or CDN URL.' }],
      ['POST', '/files/remote_copy/', `{"source": "${uuid}"}`, { detail: '`target` parameter is required.' }],
      ['POST', '/files/remote_copy/', `{"source": "${uuid}", "target": 5}`, { detail: 'Project has no storage with provided name.' }],
      ['POST', '/files/remote_copy/', `{"source": "${uuid}", "target": "s", "make_public": "x"}`, { detail: '`make_public` parameter should be `true` or `false`.' }],
      ['POST', '/files/remote_copy/', `{"source": "${uuid}", "target": "s", "pattern": 5}`, { detail: 'Invalid pattern provided: `5`' }],
      [
        'POST',
        '/files/search/?limit=500&offset=x&include=all',
        '{"bogus": 1}',
        {
          limit: ['Must be an integer from 1 to 100.'],
          offset: ['Must be a non-negative integer.'],
          include: ['Only appdata can be included.'],
          bogus: ['Unknown field.'],
          non_field_errors: ['Give at least one condition: query, phrase, exact, datetime_uploaded, size, is_image, tags, stored, removed, appdata_labels.'],
        },
      ],
      // The depth check runs whenever limit and offset are valid, alongside the other fields' errors.
      ['POST', '/files/search/?include=all&offset=990&limit=20', '{"is_image": true}', { include: ['Only appdata can be included.'], offset: ["offset + limit must not exceed 1000; follow the next link's cursor to go deeper."] }],
      ['GET', `/files/?tags=${'a,b,c,d,e,f,g,h,i,j,k'}`, '', { detail: '`tags` accepts at most 10 tags.' }],
      ['GET', '/files/?include=all', '', { detail: '`include` accepts only: appdata.' }],
      ['GET', '/files/?removed=x&limit=0', '', { detail: '`removed` must be true or false.' }],
      ['GET', `/files/${uuid}/?add_fields=x&include=all`, '', { detail: '`include` accepts only: appdata.' }],
      ['GET', '/groups/?from=yesterday', '', { detail: '`from` must be an ISO 8601 date-time such as 2024-01-01T00:00:00Z.' }],
      ['GET', '/groups/?limit=x&from=yesterday', '', { detail: '`limit` must be an integer from 1 to 1000.' }],
    ];
    for (const [method, path, body, json] of cases) {
      const res = await s.call(method, path, { body });
      expect([res.status, res.json], `${method} ${path} ${body}`).toEqual([400, json]);
    }
    // v0.6 has its own parameters: `ordering=size` is accepted, `add_fields` is checked, `include` is not.
    const v06 = { accept: 'application/vnd.uploadcare-v0.6+json' };
    expect((await s.call('GET', '/files/?ordering=-size&include=all', v06)).status).toBe(200);
    expect((await s.call('GET', '/files/?add_fields=x', v06)).json).toEqual({ detail: '`add_fields` accepts only: rekognition_info.' });
    expect((await s.call('GET', `/files/${uuid}/?add_fields=x`, v06)).json).toEqual({ detail: '`add_fields` accepts only: rekognition_info.' });
    expect((await s.call('GET', '/files/?ordering=size&from=yesterday', v06)).json).toEqual({ detail: '`from` must be a size in bytes when ordering by size.' });
    // Deliveries: an unknown subscription is a 404 before its query is judged.
    const sub = await s.call('POST', '/webhooks/', { body: '{"target_url": "https://example.com/openapi", "event": "file.uploaded"}' });
    expect(sub.status).toBe(201);
    const hook = (sub.json as { id: number }).id;
    expect((await s.call('GET', '/webhooks/999999/deliveries/?limit=0')).status).toBe(404);
    expect((await s.call('GET', `/webhooks/${hook}/deliveries/?limit=0&before=x`)).json).toEqual({ detail: '`limit` must be an integer from 1 to 1000.' });
    expect((await s.call('GET', `/webhooks/${hook}/deliveries/?before=x`)).json).toEqual({ detail: '`before` must be a delivery id.' });
  });
});

describe('Upload API fields validated by their route schemas', () => {
  it('documents the fields the schemas validate', async () => {
    const doc = await documentOf(s.upload);
    const form = (path: string) => (doc.paths[path]!['post'] as unknown as BodyOp).requestBody!.content['multipart/form-data']!.schema;
    const paramOf = (path: string, name: string) => (doc.paths[path]!['get'] as unknown as BodyOp).parameters?.find((p) => p.name === name)?.schema;
    expect(form('/from_url/').required).toEqual(['pub_key', 'source_url']);
    expect(form('/from_url/').properties['store']!['enum']).toEqual(['1', '0', 'auto']);
    expect(form('/multipart/start/').properties['size']).toMatchObject({ type: 'integer', minimum: 10485760 });
    expect(form('/multipart/start/').required).toEqual(['UPLOADCARE_PUB_KEY', 'filename', 'size', 'content_type']);
    expect(form('/base/').properties).toHaveProperty(['metadata[<key>]']);
    expect(form('/group/').required).toContain('files[]');
    expect(paramOf('/info/', 'file_id')).toMatchObject({ format: 'uuid' });
    expect(paramOf('/from_url/status/', 'token')).toBeDefined();
    expect(paramOf('/group/info/', 'group_id')).toBeDefined();
  });

  it('answer bad fields with their documented status and text, the key judged first', async () => {
    const key = s.keys.public_key;
    const post = (path: string, fields: Record<string, string>) => request(`${s.upload}${path}`, { method: 'POST', body: new URLSearchParams(fields) });
    const cases: Array<[Promise<{ status: number; text: string }>, number, string]> = [
      [post('/from_url/', { pub_key: key }), 400, 'source_url is required.'],
      [post('/from_url/', { pub_key: key, source_url: 'https://example.com/a.png', store: 'maybe' }), 400, 'store should be 0, 1 or auto.'],
      [post('/from_url/', { pub_key: key, source_url: 'https://example.com/a.png', 'metadata[a b]': 'x' }), 400, "File's metadata key `a b` contains symbols not allowed by the metadata key format."],
      [post('/from_url/', { source_url: '' }), 403, 'pub_key is required.'],
      [request(`${s.upload}/from_url/status/`), 400, 'token is required.'],
      [post('/multipart/start/', { UPLOADCARE_PUB_KEY: key, size: '20000000', content_type: 'a/b' }), 400, 'filename is required.'],
      [post('/multipart/start/', { UPLOADCARE_PUB_KEY: key, filename: 'a', size: 'big', content_type: 'a/b' }), 400, 'size should be integer.'],
      [post('/multipart/start/', { UPLOADCARE_PUB_KEY: key, filename: 'a', size: '20000000', content_type: 'a/b', part_size: '1' }), 400, 'Multipart Upload Part Size can not be less than 5242880 bytes.'],
      [post('/multipart/complete/', { UPLOADCARE_PUB_KEY: key, uuid: 'x' }), 400, 'uuid is invalid.'],
      [request(`${s.upload}/info/?pub_key=${key}`), 400, 'file_id is required.'],
      [request(`${s.upload}/info/?file_id=x`), 403, 'pub_key is required.'],
      [request(`${s.upload}/group/info/?pub_key=${key}`), 400, 'group_id is required.'],
      [post('/group/', { pub_key: key }), 400, 'No files[N] parameters found.'],
      [post('/group/', { pub_key: key, 'files[0]': 'nope' }), 400, 'This is not valid file url: nope.'],
    ];
    for (const [res, status, text] of cases) expect(await res.then((r) => [r.status, r.text])).toEqual([status, text]);
    const form = new FormData();
    form.append('UPLOADCARE_PUB_KEY', key);
    form.append('UPLOADCARE_STORE', 'maybe');
    form.append('file', new Blob(['x']), 'x.txt');
    const base = await request(`${s.upload}/base/`, { method: 'POST', body: form });
    expect([base.status, base.text]).toEqual([400, 'store should be 0, 1 or auto.']);
  });
});

describe('path ids validated by their route schemas', () => {
  type PathOp = { parameters?: Array<{ name: string; in: string; schema: Record<string, unknown> }> };
  const pathParam = (doc: Doc, path: string, method: string, name: string) => (doc.paths[path]![method] as unknown as PathOp).parameters?.find((p) => p.in === 'path' && p.name === name)?.schema;

  it('documents file, conversion and part ids with their formats', async () => {
    const rest = await documentOf(s.rest);
    for (const [path, method] of [['/files/{uuid}/', 'get'], ['/files/{uuid}/storage/', 'put'], ['/files/{uuid}/metadata/{key}/', 'put'], ['/files/{uuid}/tags/', 'get'], ['/convert/document/{uuid}/', 'get']] as const) {
      expect(pathParam(rest, path, method, 'uuid'), `${method} ${path}`).toMatchObject({ type: 'string', format: 'uuid' });
    }
    expect(pathParam(rest, '/convert/document/status/{token}/', 'get', 'token')).toMatchObject({ pattern: '^\\d{1,15}$' });
    expect(pathParam(rest, '/groups/{id}/', 'get', 'id')).toMatchObject({ pattern: '^[0-9a-fA-F-]{36}~[0-9]{1,4}$' });
    const upload = await documentOf(s.upload);
    expect(pathParam(upload, '/multipart/upload/{uuid}/{part}/', 'put', 'uuid')).toMatchObject({ format: 'uuid' });
    expect(pathParam(upload, '/multipart/upload/{uuid}/{part}/', 'put', 'part')).toMatchObject({ pattern: '^[0-9]{1,5}$' });
  });

  it('answers ids that name nothing with 404s, and a bad metadata key with its 400 first', async () => {
    const upper = (await s.call('GET', '/files/00000000-0000-0000-0000-00000000000A/')).status;
    const cases: Array<[string, string, number, string?]> = [
      ['GET', '/files/not-a-uuid/', 404, '{"detail":"Not found."}'],
      ['PUT', '/files/not-a-uuid/storage/', 404],
      ['GET', '/files/not-a-uuid/metadata/', 404],
      ['DELETE', '/files/not-a-uuid/metadata/k/', 404],
      ['DELETE', '/files/not-a-uuid/metadata/a%20b/', 400, '{"detail":"File\'s metadata key `a b` contains symbols not allowed by the metadata key format."}'],
      ['GET', '/convert/document/not-a-uuid/', 404],
      ['GET', '/groups/not-a-group/', 404, '{"detail":"Not found."}'],
      ['DELETE', '/groups/00000000-0000-0000-0000-000000000000/', 404],
      ['GET', '/groups/00000000-0000-0000-0000-000000000000~2/', 404],
      ['GET', '/convert/document/status/abc/', 404],
      ['GET', '/convert/video/status/1234567890123456/', 404],
      ['GET', '/addons/uc_clamav_virus_scan/execute/status/?request_id=x', 200, '{"status":"unknown"}'],
      ['GET', '/addons/no_such_addon/execute/status/?request_id=x', 404],
    ];
    for (const [method, path, status, body] of cases) {
      const res = await s.call(method, path);
      expect(res.status, `${method} ${path}`).toBe(status);
      if (body) expect(res.text, `${method} ${path}`).toBe(body);
    }
    // An id in capitals is the same id (canonical form), not a 400.
    expect(upper).toBe(404);
    const put = (path: string) => request(`${s.upload}${path}`, { method: 'PUT', body: 'x' });
    for (const path of ['/multipart/upload/not-a-uuid/1/', '/multipart/upload/00000000-0000-0000-0000-000000000000/0/', '/multipart/upload/00000000-0000-0000-0000-000000000000/x/']) {
      expect((await put(path)).status, path).toBe(404);
    }
    expect((await put('/multipart/upload/00000000-0000-0000-0000-000000000000/1/')).status).toBe(403);
  });

  it('checks an add-on execute body with the named add-on\'s schema, after the name', async () => {
    const exec = (name: string, body: string) => s.call('POST', `/addons/${name}/execute/`, { body });
    const cases: Array<[string, string, number, string]> = [
      ['no_such_addon', '[]', 404, 'Not found.'],
      ['uc_clamav_virus_scan', '[]', 400, 'Expected JSON object.'],
      ['uc_clamav_virus_scan', '{}', 400, '`target` is required.'],
      ['uc_clamav_virus_scan', '{"target": 5}', 400, '`target` must be a file UUID string.'],
      ['uc_clamav_virus_scan', '{"target": "x"}', 400, '`target` is not a valid file UUID.'],
      ['uc_clamav_virus_scan', '{"target": "00000000-0000-0000-0000-000000000000", "params": {"nope": 1}}', 400, ''],
      ['uc_clamav_virus_scan', '{"target": "00000000-0000-0000-0000-000000000000"}', 404, 'Not found.'],
    ];
    for (const [name, body, status, detail] of cases) {
      const res = await exec(name, body);
      expect(res.status, `${name} ${body} ${res.text}`).toBe(status);
      if (detail) expect((res.json as { detail: string }).detail, `${name} ${body}`).toBe(detail);
      else expect((res.json as { detail: string }).detail).toMatch(/params\.nope/);
    }
  });
});

describe('the docs page', () => {
  for (const surface of ['rest', 'upload'] as const) {
    it(`${surface}: /docs/ loads, referencing only its own assets`, async () => {
      const page = await request(`${s[surface]}/docs/`);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(page.headers.get('content-security-policy')).toMatch(/default-src 'self'/);
      const refs = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] ?? '');
      expect(refs.length).toBeGreaterThanOrEqual(3);
      for (const ref of refs) {
        expect(ref, 'a local, relative asset').toMatch(/^\.\/[\w.-]+$/);
        const asset = await request(new URL(ref, `${s[surface]}/docs/`).toString());
        expect(asset.status, ref).toBe(200);
      }
      expect((await request(`${s[surface]}/docs/..%2Fpackage.json`)).status).toBe(404);
      expect((await request(`${s[surface]}/docs/index.html`)).status).toBe(404);
    });
  }

  describe.skipIf(!fs.existsSync(CHROMIUM))('in chromium', () => {
    let browser: Browser;
    beforeAll(async () => {
      fs.mkdirSync(ARTIFACTS, { recursive: true });
      browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
    }, 60_000);
    afterAll(async () => browser?.close());

    it('renders the REST operations, with no request leaving the server', async () => {
      const page = await browser.newPage();
      const foreign: string[] = [];
      page.on('request', (r) => {
        if (!r.url().startsWith(s.rest) && !r.url().startsWith('data:')) foreign.push(r.url());
      });
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(String(e)));
      await page.goto(`${s.rest}/docs/`);
      await page.locator('.opblock').first().waitFor({ timeout: 30_000 });
      const summaries = await page.locator('.opblock-summary-path').allTextContents();
      expect(summaries.map((t) => t.replace(/\u200b/g, ''))).toContain('/files/{uuid}/tags/');
      expect(await page.locator('.opblock').count()).toBeGreaterThanOrEqual(9);
      expect(foreign).toEqual([]);
      expect(errors).toEqual([]);
      await page.close();
    }, 60_000);

    /** Opens `GET /files/` on the page, presses Try it out and Execute; answers the request's Accept and the response's status. */
    async function tryListFiles(page: Page): Promise<{ accept: string | undefined; status: number; body: string }> {
      const op = page.locator('#operations-Files-get_files_');
      await op.locator('.opblock-summary').click();
      await op.locator('button.try-out__btn').click();
      const [request] = await Promise.all([page.waitForRequest((r) => new URL(r.url()).pathname === '/files/'), op.locator('button.execute').click()]);
      const response = await request.response();
      return { accept: request.headers()['accept'], status: response?.status() ?? 0, body: (await response?.text()) ?? '' };
    }

    it('"Try it out" sends the versioned Accept and works after Authorize with Simple auth', async () => {
      const uuid = await s.uploadFile('tried.txt', 'tried from the docs page');
      const page = await browser.newPage();
      await page.goto(`${s.rest}/docs/`);
      await page.locator('.opblock').first().waitFor({ timeout: 30_000 });
      await page.click('button.authorize');
      await page.locator('.modal-ux input').first().fill(`Uploadcare.Simple ${s.keys.public_key}:${s.keys.secret_key}`);
      await page.locator('.modal-ux button.authorize').first().click();
      await page.locator('.modal-ux button.close-modal').click();
      const tried = await tryListFiles(page);
      expect(tried.accept).toBe('application/vnd.svc-v0.7+json');
      expect(tried.status, tried.body).toBe(200);
      expect(tried.body).toContain(uuid);
      await page.screenshot({ path: path.join(ARTIFACTS, 'try-it-out.png'), fullPage: false });
      await page.close();
    }, 60_000);

    it('"Try it out" works with a dashboard session open in the same browser, and without one is a 401', async () => {
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(`${s.rest}/docs/`);
      await page.locator('.opblock').first().waitFor({ timeout: 30_000 });
      const anonymous = await tryListFiles(page);
      expect(anonymous.status).toBe(401);
      const signedIn = await page.evaluate(async (keys) => {
        const r = await fetch('/dashboard/api/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(keys) });
        return r.status;
      }, { public_key: s.keys.public_key, secret_key: s.keys.secret_key });
      expect(signedIn).toBe(200);
      // A fresh page of the same browser (the first one keeps the operation open).
      const again = await context.newPage();
      await again.goto(`${s.rest}/docs/`);
      await again.locator('.opblock').first().waitFor({ timeout: 30_000 });
      const tried = await tryListFiles(again);
      expect(tried.status, tried.body).toBe(200);
      expect(JSON.parse(tried.body)).toHaveProperty('results');
      await context.close();
    }, 60_000);
  });
});

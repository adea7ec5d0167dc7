/**
 * Builds an OpenAPI 3.1 document from a surface's route catalog: paths from the routes Fastify
 * registered, parameters, bodies and responses from their zod schemas (JSON Schema 2020-12, the
 * dialect OpenAPI 3.1 uses), and the surface's security schemes.
 */
import { z } from 'zod';
import type { CatalogEntry } from './catalog.js';
import type { ResponseDoc, RouteDoc, SecurityScheme } from '../route.js';

type Json = Record<string, unknown>;

export interface DocumentInfo {
  title: string;
  version: string;
  description: string;
  /** The surface's base URL ('' until the server listens: then the document's own origin is used). */
  serverUrl: string;
  securitySchemes: Partial<Record<SecurityScheme, Json>>;
}

export function buildDocument(info: DocumentInfo, entries: readonly CatalogEntry[]): Json {
  const paths: Record<string, Record<string, Json>> = {};
  for (const entry of entries) {
    const config = entry.config();
    const doc = config?.openapi;
    // Hidden: the document and its page. Open routes without a description are pages that
    // authenticate on their own (the dashboard), not the API.
    if (doc?.hidden || (!doc && config?.openRoute)) continue;
    const path = openApiPath(entry.url);
    const item = (paths[path] ??= {});
    for (const method of entry.methods) {
      item[method.toLowerCase()] = doc ? operation(entry, method, doc) : undescribed(entry, method);
    }
  }
  return {
    openapi: '3.1.0',
    info: { title: info.title, version: info.version, description: info.description },
    ...(info.serverUrl ? { servers: [{ url: info.serverUrl }] } : {}),
    paths,
    components: { securitySchemes: info.securitySchemes },
  };
}

/** `/files/:uuid/` -> `/files/{uuid}/` */
export function openApiPath(url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

function operation(entry: CatalogEntry, method: string, doc: RouteDoc): Json {
  const parameters = [...parametersOf(doc.params, 'path', entry.url), ...parametersOf(doc.query, 'query', entry.url)];
  const op: Json = {
    operationId: entry.methods.length > 1 || !doc.operationId ? operationId(method, entry.url, doc.operationId) : doc.operationId,
    summary: doc.summary,
    ...(doc.description ? { description: doc.description } : {}),
    tags: [...doc.tags],
    security: doc.security.map((set) => Object.fromEntries(set.map((s) => [s, []]))),
    ...(parameters.length > 0 ? { parameters } : {}),
    responses: Object.fromEntries(Object.entries(doc.responses).map(([status, r]) => [status, response(r)])),
  };
  if (doc.body && method !== 'GET' && method !== 'DELETE') {
    const schema = jsonSchema(doc.body.schema, 'input');
    op['requestBody'] = {
      required: !doc.body.schema.safeParse(undefined).success,
      content: Object.fromEntries((doc.body.contentTypes ?? ['application/json']).map((t) => [t, { schema }])),
    };
  }
  return op;
}

function undescribed(entry: CatalogEntry, method: string): Json {
  return {
    operationId: operationId(method, entry.url),
    summary: 'Not described yet',
    'x-stowage-undescribed': true,
    responses: { default: { description: 'Not described.' } },
  };
}

function operationId(method: string, url: string, base?: string): string {
  // The trailing slash is kept (as `_`): `/tus` and `/tus/` are two routes.
  const slug = url.replace(/:([A-Za-z0-9_]+)/g, 'by_$1').replace(/[^A-Za-z0-9]+/g, '_').replace(/^_/, '');
  return base ? `${base}_${method.toLowerCase()}` : `${method.toLowerCase()}_${slug || 'root'}`;
}

function parametersOf(schema: z.ZodType | undefined, where: 'path' | 'query', url: string): Json[] {
  const names = where === 'path' ? [...url.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1] ?? '') : [];
  const object = schema ? jsonSchema(schema, 'input') : { properties: {} };
  const props = (object['properties'] ?? {}) as Record<string, Json>;
  const required = new Set((object['required'] ?? []) as string[]);
  // Every path segment is a parameter, described or not (OpenAPI requires it).
  for (const name of names) props[name] ??= { type: 'string' };
  return Object.entries(props).map(([name, prop]) => {
    const { description, ...rest } = prop;
    return {
      name,
      in: where,
      required: where === 'path' || required.has(name),
      ...(typeof description === 'string' ? { description } : {}),
      schema: rest,
    };
  });
}

function response(r: ResponseDoc): Json {
  if (!r.schema) return { description: r.description };
  return { description: r.description, content: { [r.contentType ?? 'application/json']: { schema: jsonSchema(r.schema, 'output') } } };
}

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Json {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as Json;
  return rest;
}

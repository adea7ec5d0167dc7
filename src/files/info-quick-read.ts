/**
 * `GET /files/{uuid}/` answered before routing (feature.ts `RestQuickRead`) when the file's record is
 * in this node's cache at the current change stamp (record-cache.ts): the bytes are the ones the
 * route would send for the same record and API version, so nothing on the wire differs. A URL with
 * a query string: the route answers. A record not cached, cached at an older stamp or on a store
 * without a stamp (PostgreSQL with other writers) is read here (`load`), as the route would read it.
 *
 * Why: on a cache hit the route itself costs more than the answer (Fastify's routing, hooks and
 * reply, the zod checks of the path and query, two promises), most of the gap to a bare Fastify
 * route that `bench/rest.mjs` measures (docs/performance.md).
 */
import { parseUuid } from '../core/ids.js';
import type { RestVersion } from '../core/file-json.js';
import type { FileRecord } from '../core/file-record.js';
import type { RestQuickRead } from '../feature.js';
import type { FileService } from './service.js';
import { infoExtrasOf } from './list-query.js';

const PREFIX = '/files/';
const UUID_LENGTH = 36;

type InfoAnswer = (version: RestVersion, file: Readonly<FileRecord>, extras: boolean) => Buffer;

export function fileInfoQuickRead(files: FileService, infoAnswer: InfoAnswer): RestQuickRead {
  // What the route's query check gives a request without a query string, per version.
  const plainExtras = { '0.6': infoExtrasOf('0.6', {}), '0.7': infoExtrasOf('0.7', {}) } as const;
  return {
    route: '/files/:uuid/',
    match(path) {
      if (path.length !== PREFIX.length + UUID_LENGTH + 1 || !path.startsWith(PREFIX) || path.charCodeAt(path.length - 1) !== 47 /* / */) return null;
      return parseUuid(path.slice(PREFIX.length, -1));
    },
    answer(uuid, projectId, version) {
      const file = files.cached(projectId, uuid);
      return file === undefined ? null : infoAnswer(version, file, plainExtras[version]);
    },
    // The route's own read (through the cache where the store has one); a missing file throws its
    // 404, which the route then answers.
    async load(uuid, projectId, version) {
      return infoAnswer(version, await files.get(projectId, uuid), plainExtras[version]);
    },
  };
}

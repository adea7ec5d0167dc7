/**
 * What a feature contributes to a node. A feature is a folder (src/files, src/groups, …) whose
 * `feature.ts` builds its services and RETURNS this object; app.ts hands the pieces to the three
 * servers and the job worker. Nothing is registered by mutating a server module.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { FileRecord } from './core/file-record.js';
import type { RestVersion } from './core/file-json.js';
import type { JobHandlers } from './jobs/worker.js';
import type { PeriodicSchedule } from './jobs/periodic.js';
import type { BlobKeyOwner } from './blobs/sweep.js';
import type { FileEventJobs } from './jobs/event-outbox.js';
import type { Plan } from './media/plan.js';
import type { RenderResult } from './media/render.js';

/**
 * Answers one request of the S3-compatible surface: at once (undefined) or by a promise. Errors
 * are thrown or rejected; the surface's server renders them as S3's XML.
 */
export type S3Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void> | undefined;

/** A Fastify plugin adding routes to one surface (REST routes run after authentication). */
export type RoutePlugin = (app: FastifyInstance) => Promise<void>;

export interface Feature {
  name: string;
  restRoutes?: RoutePlugin;
  /** REST reads the server may answer from memory before routing (see RestQuickRead). */
  restQuickReads?: RestQuickRead[];
  /**
   * REST-surface routes that authenticate on their own (the dashboard's pages and sign-in): the
   * API's Accept, signature, throttle and CORS hooks skip them.
   */
  openRestRoutes?: RoutePlugin;
  /** Another way into the REST API than a signature: a browser session (the dashboard). */
  restSession?: RestSessionAuth;
  uploadRoutes?: RoutePlugin;
  /** Every request of the S3-compatible surface (one feature answers them, src/s3/). */
  s3?: S3Handler;
  /** CDN requests of one kind (file or group) this feature answers. */
  cdn?: Partial<CdnHandlers>;
  /** Job kinds this feature runs, each with the handler of its payload type (jobs/kinds.ts). */
  jobs?: JobHandlers;
  /** Blob key prefixes this feature writes, and which keys rows still reference (src/blobs/sweep.ts). */
  blobOwners?: BlobKeyOwner[];
  /** Jobs proposed once per period by every node; the queue keeps one per period. */
  schedules?: PeriodicSchedule[];
  /** Jobs this feature writes itself for file events, in the change's transaction (jobs/event-outbox.ts). */
  fileEventJobs?: FileEventJobs;
}

/**
 * Authenticates a REST API request by a browser session. Answers the project id, or null when the
 * request carries no session (the signature check runs then); throws an AppError (401/403) for a
 * session that ended or a write from another site.
 */
export type RestSessionAuth = (req: FastifyRequest) => Promise<number | null>;

/**
 * A REST read a feature can answer without a promise when all it needs is in memory (a file's info
 * from the node's record cache). The REST server tries it before routing, for a plain GET that the
 * API's gate (src/http/rest/gate.ts: Accept, authentication, throttling) admits at once, so it is
 * the very answer the route would give. A read that cannot answer returns null and the route
 * answers as usual, without checking the request again (src/http/rest/quick-reads.ts).
 */
export interface RestQuickRead {
  /** The route pattern it stands in for: the request's metrics label. */
  route: string;
  /** What the read needs from the URL (path only, no query string), or null when it is not this read's. */
  match(path: string): string | null;
  /** The JSON body the route would send with 200, or null when only the route can tell. */
  answer(key: string, projectId: number, version: RestVersion): Buffer | null;
  /**
   * When `answer` has nothing in memory (a cache miss; on PostgreSQL with no change stamp, every
   * time): the same answer read as the route reads it, or null (or a throw) when only the route can tell.
   */
  load?(key: string, projectId: number, version: RestVersion): Promise<Buffer | null>;
}

/*
 * Services one feature hands another through features.ts (a feature imports no other feature's
 * folder). Both come from the delivery feature.
 */

/** Answers a CDN request for one stored file: its original, or the rendition its plan asks for. */
export type DeliverFile = (req: IncomingMessage, res: ServerResponse, file: FileRecord, request: { plan: Plan; filename: string | null }) => Promise<void>;

/**
 * Blobs' bytes from the node's originals cache (the CDN's raw delivery keeps them there). The S3
 * surface's GetObject reads through it.
 */
export interface ReadOriginal {
  /** Read and remembered on a miss; null when the caller should stream from the store instead (too large, the cache off, or too much being read at once). */
  read(blobKey: string, size: number): Promise<Buffer | null>;
  /** The bytes when the cache holds them now, without a promise; else null. */
  held(blobKey: string): Buffer | null;
}

/** Renders a stored image through the pipeline (copies with operations). */
export type RenderStoredFile = (file: FileRecord, plan: Plan) => Promise<RenderResult>;

/**
 * Makes a group of the project's files, in order (the groups feature), for conversions that save
 * pages or thumbnails in a group. `uuid`: the group's uuid when the caller chose it in advance.
 * Returns the group's public id `<uuid>~N`.
 */
export type MakeGroup = (projectId: number, fileUuids: string[], uuid?: string) => Promise<string>;

// The CDN's requests, as http/cdn/url.ts parses them, and the handlers features give for them.

export interface FileRequest {
  kind: 'file';
  uuid: string;
  plan: Plan;
  filename: string | null;
  /** The operation segments as written (percent-encoded): group entries keep them as default_effects. */
  written: string[];
}

export type GroupView =
  | { kind: 'page' }
  | { kind: 'nth'; index: number; plan: Plan }
  | { kind: 'archive'; format: 'zip' | 'tar' };

export interface GroupRequest {
  kind: 'group';
  groupId: string;
  view: GroupView;
  filename: string | null;
}

/** A conversion path (wire-reference §2.12): served from the result of the matching finished conversion. */
export interface ConversionRequest {
  kind: 'conversion';
  uuid: string;
  conversion: 'document' | 'video';
  /** The path as POST /convert/…/ takes it: `<uuid>/document/-/…/` (segments still percent-encoded). */
  path: string;
  filename: string | null;
}

export type CdnRequest = FileRequest | GroupRequest | ConversionRequest;

/** What features answer: file URLs (the delivery feature), group URLs (groups), conversion results (conversions). */
export interface CdnHandlers {
  file(req: IncomingMessage, res: ServerResponse, request: FileRequest): Promise<void>;
  group(req: IncomingMessage, res: ServerResponse, request: GroupRequest): Promise<void>;
  conversion(req: IncomingMessage, res: ServerResponse, request: ConversionRequest): Promise<void>;
}

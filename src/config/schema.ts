/** Each setting's type and bounds (zod): what loadConfig accepts after merging its sources. */
import { z } from 'zod';
import { OPERATOR_BOOLEANS, parseBoolean } from '../core/booleans.js';

const port = z.coerce.number().int().min(0).max(65535);
const bool = z
  .union([z.boolean(), z.string()])
  .transform((v, ctx) => {
    const s = typeof v === 'string' ? v.trim() : v;
    // An empty variable (FOO=) means off.
    const b = s === '' ? false : parseBoolean(s, OPERATOR_BOOLEANS);
    if (b !== undefined) return b;
    ctx.addIssue({ code: 'custom', message: `expected a boolean, got "${v}"` });
    return z.NEVER;
  });
const csv = z
  .union([z.array(z.string()), z.string()])
  .transform((v) => (Array.isArray(v) ? v : v.split(',')).map((s) => s.trim()).filter(Boolean));

export const schema = z.object({
  /** Data directory: the SQLite file, blobs, caches, temporary files. */
  dataDir: z.string().min(1),
  /** Listen address of every surface. */
  host: z.string().min(1),
  /** REST API, Upload API and CDN ports (0 = any free port). */
  restPort: port,
  uploadPort: port,
  cdnPort: port,
  /** The S3-compatible surface (served when `only` names `s3`, docs/s3.md). */
  s3ApiPort: port,
  /** Which surfaces this process serves. */
  only: z.array(z.enum(['rest', 'upload', 'cdn', 's3'])).min(1),
  /** `postgres://…` selects PostgreSQL; empty means SQLite in the data dir. */
  databaseUrl: z.string(),
  /** Public base URLs used in responses (defaults derive from host and ports). */
  restBaseUrl: z.string().url().optional(),
  uploadBaseUrl: z.string().url().optional(),
  cdnBaseUrl: z.string().url().optional(),
  /** Largest file one upload may carry, bytes. */
  maxUploadBytes: z.coerce.number().int().positive(),
  /**
   * A file stored on disk whose declared size is at least this many bytes is answered before its
   * MD5 and SHA-256 are computed: a job computes them after the answer (docs/storage.md). 0 = never.
   */
  digestLaterBytes: z.coerce.number().int().min(0),
  /** An uploaded file not stored within this long expires. */
  unstoredTtlMs: z.coerce.number().int().positive(),
  /** Files feature: a file removed through the REST API can be stored again (its bytes kept) for this long; 0: removal is final. */
  restoreWindowMs: z.coerce.number().int().min(0),
  /** Accept the official SDKs' identifiers (Uploadcare scheme words, UPLOADCARE_PUB_KEY, vendor media type). */
  sdkAliases: bool,
  /** TLS certificate and key (PEM files): all three surfaces then listen with HTTPS. */
  tlsCertFile: z.string().optional(),
  tlsKeyFile: z.string().optional(),
  /** Peers whose X-Forwarded-Proto (REST) and X-Forwarded-For (Upload API client address) are believed (IP addresses or CIDRs). */
  trustedProxies: csv,
  /** REST: accept `Svc.Simple` over plain HTTP from a direct loopback connection (no proxy headers); elsewhere it needs HTTPS. */
  simpleAuthLoopback: bool,
  /** GET /metrics (Prometheus text format): on metricsPort when given, else on the REST port (or Upload's without REST). */
  metrics: bool,
  /** A port of its own for GET /metrics (then no surface answers it); unset: the REST port. */
  metricsPort: port.optional(),
  /** Networks the outbound client may reach despite the SSRF guard. */
  outboundAllow: csv,
  /** Job queue poll period: a fallback, since enqueued jobs wake the workers at once (other PostgreSQL nodes by NOTIFY). */
  jobPollMs: z.coerce.number().int().positive(),
  /** How often some node sweeps expired unstored files. */
  expirySweepMs: z.coerce.number().int().positive(),
  /**
   * PostgreSQL: a node that is its schema's only writer caches file rows for the REST reads, as on
   * SQLite, and stops before another process writes (db/pg-alone.ts). Off for schemas that
   * processes other than Stowage write to.
   */
  pgRowCache: bool,
  /**
   * PostgreSQL: connections one node's pool may hold; the node opens two more of its own (the job
   * listener and the row cache's session). Every node's sum must fit the server's max_connections.
   */
  databasePoolMax: z.coerce.number().int().min(2),
  /** PostgreSQL schema (created if missing); isolates tenants or test runs sharing a database. */
  databaseSchema: z.string().regex(/^[a-z_][a-z0-9_]{0,62}$/, 'lowercase letters, digits and _').optional(),
  /** Log level (pino). */
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
  /** Uploads feature: unfinished multipart uploads expire (and their parts are reclaimed) after this. */
  multipartTtlMs: z.coerce.number().int().positive(),
  /** Uploads feature: lease of a multipart completion, renewed while it runs; a crashed node's completion can be retried after it. */
  multipartClaimLeaseMs: z.coerce.number().int().min(1000),
  /** tus feature: an unfinished tus upload expires this long after its last accepted chunk (its bytes are swept). */
  tusTtlMs: z.coerce.number().int().positive(),
  /** tus feature: how often some node sweeps expired tus uploads. */
  tusSweepMs: z.coerce.number().int().positive(),
  /** tus feature: total Upload-Length of one project's unfinished tus uploads. */
  tusProjectMaxBytes: z.coerce.number().int().positive(),
  /** tus feature: total Upload-Length of the unfinished tus uploads one client address (IPv6: /64) has in one project. */
  tusClientMaxBytes: z.coerce.number().int().positive(),
  /** Uploads feature: total deadline of one from_url download. */
  fromUrlTimeoutMs: z.coerce.number().int().positive(),
  /** Uploads feature: job lease of a from_url fetch, renewed while it runs; a dead node's fetch restarts after it. */
  fromUrlLeaseMs: z.coerce.number().int().min(1000),
  /** Throttling: sustained requests per second and burst per project; 0 switches the limit off. */
  rateRestPerSec: z.coerce.number().min(0),
  rateRestBurst: z.coerce.number().int().min(1),
  rateUploadPerSec: z.coerce.number().min(0),
  rateUploadBurst: z.coerce.number().int().min(1),
  /** Throttling: Upload API requests per client address (unknown public keys count here only); 0 switches it off. */
  rateUploadIpPerSec: z.coerce.number().min(0),
  rateUploadIpBurst: z.coerce.number().int().min(1),
  /** /base/: file bytes staged before a known public key arrived, per client address and in all (0 = the key must come first). */
  anonymousStagingPerIpBytes: z.coerce.number().int().min(0),
  anonymousStagingTotalBytes: z.coerce.number().int().min(0),
  /** Groups feature: total uncompressed bytes of one group archive (spec: 2 GB). */
  groupArchiveMaxBytes: z.coerce.number().int().positive(),
  /** Copies: largest source copied as is, and largest source copied with operations (spec: 5 GB, 100 MB). */
  copyMaxBytes: z.coerce.number().int().positive(),
  copyProcessedMaxBytes: z.coerce.number().int().positive(),
  /** Images feature: disk cache of processed results under <dataDir>/cache (0 = off), and its in-memory front for small results. */
  cdnCacheMaxBytes: z.coerce.number().int().min(0),
  cdnMemoryCacheBytes: z.coerce.number().int().min(0),
  /** CDN: originals kept in memory for raw delivery and decoding (0 = off), and the largest one kept. */
  cdnOriginalsCacheBytes: z.coerce.number().int().min(0),
  cdnOriginalsItemMaxBytes: z.coerce.number().int().min(0),
  /** Images feature: image pipelines run at once (0 = two per CPU) and requests allowed to wait for one; beyond: 503. */
  cdnProcessConcurrency: z.coerce.number().int().min(0),
  cdnProcessQueue: z.coerce.number().int().min(0),
  /** Wall-clock bound of one CDN render (decoding included); past it the request is a 400. */
  cdnRenderTimeoutMs: z.coerce.number().int().min(100),
  /** Webhook delivery: deadline of one POST (connect, response and the read excerpt). */
  webhookTimeoutMs: z.coerce.number().int().positive(),
  /** Webhook retries: first delay; each further one doubles (with jitter) up to webhookRetryMaxMs. */
  webhookRetryBaseMs: z.coerce.number().int().positive(),
  webhookRetryMaxMs: z.coerce.number().int().positive(),
  /** Webhook retries stop (the delivery is given up) this long after the event. */
  webhookRetryForMs: z.coerce.number().int().positive(),
  /** Webhook deliveries one node runs at once (slots of their own, apart from the other jobs). */
  webhookConcurrency: z.coerce.number().int().positive(),
  /** Webhook deliveries of one project running at once, over all nodes: one slow receiver cannot take every slot. */
  webhookConcurrencyPerProject: z.coerce.number().int().positive(),
  /** Consecutive failures (timeout, connection error, 5xx) of one target that open its circuit breaker. */
  webhookBreakerFailures: z.coerce.number().int().positive(),
  /** How long an open breaker holds deliveries back before one probe (doubles per failed probe, up to webhookRetryMaxMs). */
  webhookBreakerCooldownMs: z.coerce.number().int().positive(),
  /** Scale-out: a bucket selects S3-compatible object storage for blobs (else the data dir). */
  s3Bucket: z.string().optional(),
  /** Scale-out: S3 endpoint URL for MinIO/R2/…; empty means AWS itself. */
  s3Endpoint: z.string().url().optional(),
  /** Scale-out: the S3 region. */
  s3Region: z.string().min(1),
  /** Scale-out: endpoint in presigned multipart part URLs, when clients reach the store by another address than nodes do. */
  s3PublicEndpoint: z.string().url().optional(),
  /** Scale-out: static credentials; without them the SDK's default chain (roles, AWS_* env) applies. */
  s3AccessKeyId: z.string().optional(),
  s3SecretAccessKey: z.string().optional(),
  /** Scale-out: path-style URLs (http://host/bucket/key), as MinIO and most self-hosted stores want. */
  s3ForcePathStyle: bool,
  /** Scale-out: Redis for counters and locks shared by all nodes (throttling, CDN single-flight). */
  redisUrl: z.string().optional(),
  /** Scale-out: at SIGTERM, how long in-flight requests may take to finish before the node exits anyway. */
  shutdownGraceMs: z.coerce.number().int().min(0),
  /** All surfaces: the request line and headers must arrive within this (408 and close otherwise). */
  headersTimeoutMs: z.coerce.number().int().min(100),
  /** REST and CDN: the whole request, body included, must arrive within this (0 = no bound). */
  requestTimeoutMs: z.coerce.number().int().min(0),
  /** Upload API: the whole request must arrive within this (0 = no bound); large direct uploads over slow links need it long. */
  uploadRequestTimeoutMs: z.coerce.number().int().min(0),
  /** REST and Upload: a request body that stops arriving for this long loses its connection (0 = never). */
  bodyIdleTimeoutMs: z.coerce.number().int().min(0),
  /**
   * Leftovers of crashes: temporary files and blobs no row references are removed once older than
   * this (it must exceed the longest upload: the upload request and from_url bounds), every sweep period.
   */
  leftoversMinAgeMs: z.coerce.number().int().min(1000),
  leftoversSweepMs: z.coerce.number().int().min(100),
  /** Readiness: below this many free bytes in the data dir's file system the node reports not ready (0 = never). */
  minFreeBytes: z.coerce.number().int().min(0),
  /** Add-ons: job lease of one execution, renewed while it runs; a killed node's execution restarts after it. */
  addonLeaseMs: z.coerce.number().int().min(1000),
  /** Add-ons: wall-clock bound of one run (past it the status is `error`). */
  addonTimeoutMs: z.coerce.number().int().min(1000),
  /** Add-ons: executions one node runs at once (slots of their own). */
  addonConcurrency: z.coerce.number().int().positive(),
  /** Add-ons: where clamd listens: a unix socket path, or host:port for TCP. */
  clamdAddress: z.string().min(1),
  /** Conversions: jobs of each kind running at once on a node, and the time bound of one job's tools. */
  convertDocumentConcurrency: z.coerce.number().int().min(1),
  convertVideoConcurrency: z.coerce.number().int().min(1),
  convertDocumentTimeoutMs: z.coerce.number().int().min(100),
  convertVideoTimeoutMs: z.coerce.number().int().min(100),
  /** Largest source a conversion accepts (bytes). */
  convertMaxBytes: z.coerce.number().int().positive(),
  /** Conversions, gif2video, video facts: LibreOffice, poppler and ffmpeg confined by bubblewrap (`required`: refused where it can't run) or unconfined (`off`). */
  toolSandbox: z.enum(['required', 'off']),
  /** Conversions, gif2video, video facts: most memory one LibreOffice, poppler or ffmpeg process may allocate (RLIMIT_DATA); stopped at 7/8 of it (RSS). */
  toolMemoryBytes: z.coerce.number().int().min(64 * 1024 ** 2),
  /** Optional plugins the operator installs (`stowage plugin install …`); empty = `<dataDir>/plugins`. */
  pluginsDir: z.string(),
  /** remove_bg: the plugin's model (small, medium, large) and the most memory its process may use. */
  removeBgModel: z.enum(['small', 'medium', 'large']),
  removeBgMaxRssBytes: z.coerce.number().int().min(256 * 1024 ** 2),
  /** Detection: detector worker threads (each loads its own copy of the models). */
  detectThreads: z.coerce.number().int().min(1),
  /** Detection: bound of one detection outside a CDN render (the add-ons), model loading included. */
  detectTimeoutMs: z.coerce.number().int().min(100),
  /** Dashboard: a token that signs in to any project's dashboard (with its public key); unset: key logins only. */
  dashboardAdminToken: z.string().min(32, 'at least 32 characters').optional(),
  /** Dashboard: how long a sign-in lasts. */
  dashboardSessionTtlMs: z.coerce.number().int().min(60_000),
  /** REST and Upload: hold every answer of a described route against the schema declared for its status; a mismatch is logged and answered 500 (tests turn it on). */
  checkResponses: bool,
});

export type Config = z.infer<typeof schema>;
export type Surface = Config['only'][number];

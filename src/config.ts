/**
 * One typed configuration: defaults <- environment (STOWAGE_*) <- command-line flags.
 * Validated once at start; every module receives already-validated values.
 */
import path from 'node:path';
import { z } from 'zod';
import { OPERATOR_BOOLEANS, parseBoolean } from './core/booleans.js';

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

const schema = z.object({
  dataDir: z.string().min(1),
  host: z.string().min(1),
  restPort: port,
  uploadPort: port,
  cdnPort: port,
  /** Which surfaces this process serves. */
  only: z.array(z.enum(['rest', 'upload', 'cdn'])).min(1),
  /** `postgres://…` selects PostgreSQL; empty means SQLite in the data dir. */
  databaseUrl: z.string(),
  /** Public base URLs used in responses (defaults derive from host and ports). */
  restBaseUrl: z.string().url().optional(),
  uploadBaseUrl: z.string().url().optional(),
  cdnBaseUrl: z.string().url().optional(),
  maxUploadBytes: z.coerce.number().int().positive(),
  unstoredTtlMs: z.coerce.number().int().positive(),
  /** Accept the official SDKs' identifiers (Uploadcare scheme words, UPLOADCARE_PUB_KEY, vendor media type). */
  sdkAliases: bool,
  tlsCertFile: z.string().optional(),
  tlsKeyFile: z.string().optional(),
  /** Peers whose X-Forwarded-Proto (REST) and X-Forwarded-For (Upload API client address) are believed (IP addresses or CIDRs). */
  trustedProxies: csv,
  /** REST: accept `Svc.Simple` over plain HTTP from a direct loopback connection (no proxy headers); elsewhere it needs HTTPS. */
  simpleAuthLoopback: bool,
  /** GET /metrics (Prometheus text format) on every surface. */
  metrics: bool,
  /** Networks the outbound client may reach despite the SSRF guard. */
  outboundAllow: csv,
  jobPollMs: z.coerce.number().int().positive(),
  /** How often some node sweeps expired unstored files. */
  expirySweepMs: z.coerce.number().int().positive(),
  /** PostgreSQL schema (created if missing); isolates tenants or test runs sharing a database. */
  databaseSchema: z.string().regex(/^[a-z_][a-z0-9_]{0,62}$/, 'lowercase letters, digits and _').optional(),
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
  /** Delivery attempt records older than this are pruned. */
  webhookDeliveryRetentionMs: z.coerce.number().int().positive(),
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
  /** Optional plugins the operator installs (`stowage plugin install …`); empty = <dataDir>/plugins. */
  pluginsDir: z.string(),
  /** remove_bg: the plugin's model (small, medium, large) and the most memory its process may use. */
  removeBgModel: z.enum(['small', 'medium', 'large']),
  removeBgMaxRssBytes: z.coerce.number().int().min(256 * 1024 ** 2),
  /** Dashboard: a token that signs in to any project's dashboard (with its public key); unset: key logins only. */
  dashboardAdminToken: z.string().min(32, 'at least 32 characters').optional(),
  /** Dashboard: how long a sign-in lasts. */
  dashboardSessionTtlMs: z.coerce.number().int().min(60_000),
});

export type Config = z.infer<typeof schema>;
export type Surface = Config['only'][number];

export const DEFAULTS = {
  dataDir: './data',
  host: '127.0.0.1',
  restPort: 8080,
  uploadPort: 8081,
  cdnPort: 8082,
  only: ['rest', 'upload', 'cdn'],
  databaseUrl: '',
  maxUploadBytes: 5 * 1024 ** 3,
  unstoredTtlMs: 24 * 3600 * 1000,
  sdkAliases: true,
  trustedProxies: [],
  simpleAuthLoopback: true,
  metrics: true,
  outboundAllow: [],
  jobPollMs: 1000,
  expirySweepMs: 60_000,
  logLevel: 'info',
  multipartTtlMs: 24 * 3600 * 1000,
  multipartClaimLeaseMs: 60_000,
  tusTtlMs: 24 * 3600 * 1000,
  tusSweepMs: 60_000,
  tusProjectMaxBytes: 50 * 1024 ** 3,
  fromUrlTimeoutMs: 10 * 60 * 1000,
  fromUrlLeaseMs: 30_000,
  rateRestPerSec: 100,
  rateRestBurst: 500,
  rateUploadPerSec: 100,
  rateUploadBurst: 500,
  rateUploadIpPerSec: 50,
  rateUploadIpBurst: 250,
  anonymousStagingPerIpBytes: 64 * 1024 ** 2,
  anonymousStagingTotalBytes: 512 * 1024 ** 2,
  groupArchiveMaxBytes: 2 * 1024 ** 3,
  copyMaxBytes: 5 * 1024 ** 3,
  copyProcessedMaxBytes: 100 * 1024 ** 2,
  cdnCacheMaxBytes: 1024 ** 3,
  cdnMemoryCacheBytes: 64 * 1024 ** 2,
  cdnOriginalsCacheBytes: 256 * 1024 ** 2,
  cdnOriginalsItemMaxBytes: 8 * 1024 ** 2,
  cdnProcessConcurrency: 0,
  cdnProcessQueue: 64,
  cdnRenderTimeoutMs: 20_000,
  webhookTimeoutMs: 15_000,
  webhookRetryBaseMs: 30_000,
  webhookRetryMaxMs: 3600_000,
  webhookRetryForMs: 72 * 3600_000,
  webhookDeliveryRetentionMs: 30 * 24 * 3600_000,
  // One project's burst runs at most its limit divided by one delivery's cycle (claim, POST,
  // outcome: a few ms, mostly waiting on the store); with 8 that bound PostgreSQL below 1,000/s,
  // and bigger claims and outcome batches cost less CPU per delivery. The node's lane stays four
  // projects wide, so projects with hanging receivers cannot take every slot.
  webhookConcurrency: 64,
  webhookConcurrencyPerProject: 16,
  webhookBreakerFailures: 5,
  webhookBreakerCooldownMs: 60_000,
  s3Region: 'us-east-1',
  s3ForcePathStyle: false,
  shutdownGraceMs: 10_000,
  headersTimeoutMs: 30_000,
  requestTimeoutMs: 60_000,
  uploadRequestTimeoutMs: 3600_000,
  bodyIdleTimeoutMs: 60_000,
  minFreeBytes: 1024 ** 3,
  leftoversMinAgeMs: 6 * 3600_000,
  leftoversSweepMs: 3600_000,
  addonLeaseMs: 30_000,
  addonTimeoutMs: 120_000,
  addonConcurrency: 2,
  clamdAddress: '/var/run/clamav/clamd.ctl',
  convertDocumentConcurrency: 1,
  convertVideoConcurrency: 1,
  convertDocumentTimeoutMs: 120_000,
  convertVideoTimeoutMs: 600_000,
  convertMaxBytes: 1024 ** 3,
  pluginsDir: '',
  removeBgModel: 'medium',
  removeBgMaxRssBytes: 3 * 1024 ** 3,
  dashboardSessionTtlMs: 8 * 3600 * 1000,
} as const;

/** Environment variable for each key (STOWAGE_ + upper snake case). */
const ENV_NAMES: Record<keyof Config, string> = {
  dataDir: 'STOWAGE_DATA_DIR',
  host: 'STOWAGE_HOST',
  restPort: 'STOWAGE_REST_PORT',
  uploadPort: 'STOWAGE_UPLOAD_PORT',
  cdnPort: 'STOWAGE_CDN_PORT',
  only: 'STOWAGE_ONLY',
  databaseUrl: 'STOWAGE_DATABASE_URL',
  restBaseUrl: 'STOWAGE_REST_BASE_URL',
  uploadBaseUrl: 'STOWAGE_UPLOAD_BASE_URL',
  cdnBaseUrl: 'STOWAGE_CDN_BASE_URL',
  maxUploadBytes: 'STOWAGE_MAX_UPLOAD_BYTES',
  unstoredTtlMs: 'STOWAGE_UNSTORED_TTL_MS',
  sdkAliases: 'STOWAGE_SDK_ALIASES',
  tlsCertFile: 'STOWAGE_TLS_CERT_FILE',
  tlsKeyFile: 'STOWAGE_TLS_KEY_FILE',
  trustedProxies: 'STOWAGE_TRUSTED_PROXIES',
  simpleAuthLoopback: 'STOWAGE_SIMPLE_AUTH_LOOPBACK',
  metrics: 'STOWAGE_METRICS',
  outboundAllow: 'STOWAGE_OUTBOUND_ALLOW',
  jobPollMs: 'STOWAGE_JOB_POLL_MS',
  expirySweepMs: 'STOWAGE_EXPIRY_SWEEP_MS',
  databaseSchema: 'STOWAGE_DATABASE_SCHEMA',
  logLevel: 'STOWAGE_LOG_LEVEL',
  multipartTtlMs: 'STOWAGE_MULTIPART_TTL_MS',
  multipartClaimLeaseMs: 'STOWAGE_MULTIPART_CLAIM_LEASE_MS',
  tusTtlMs: 'STOWAGE_TUS_TTL_MS',
  tusSweepMs: 'STOWAGE_TUS_SWEEP_MS',
  tusProjectMaxBytes: 'STOWAGE_TUS_PROJECT_MAX_BYTES',
  fromUrlTimeoutMs: 'STOWAGE_FROM_URL_TIMEOUT_MS',
  fromUrlLeaseMs: 'STOWAGE_FROM_URL_LEASE_MS',
  rateRestPerSec: 'STOWAGE_RATE_REST_PER_SEC',
  rateRestBurst: 'STOWAGE_RATE_REST_BURST',
  rateUploadPerSec: 'STOWAGE_RATE_UPLOAD_PER_SEC',
  rateUploadBurst: 'STOWAGE_RATE_UPLOAD_BURST',
  rateUploadIpPerSec: 'STOWAGE_RATE_UPLOAD_IP_PER_SEC',
  rateUploadIpBurst: 'STOWAGE_RATE_UPLOAD_IP_BURST',
  anonymousStagingPerIpBytes: 'STOWAGE_ANONYMOUS_STAGING_PER_IP_BYTES',
  anonymousStagingTotalBytes: 'STOWAGE_ANONYMOUS_STAGING_TOTAL_BYTES',
  groupArchiveMaxBytes: 'STOWAGE_GROUP_ARCHIVE_MAX_BYTES',
  copyMaxBytes: 'STOWAGE_COPY_MAX_BYTES',
  copyProcessedMaxBytes: 'STOWAGE_COPY_PROCESSED_MAX_BYTES',
  cdnCacheMaxBytes: 'STOWAGE_CDN_CACHE_MAX_BYTES',
  cdnMemoryCacheBytes: 'STOWAGE_CDN_MEMORY_CACHE_BYTES',
  cdnOriginalsCacheBytes: 'STOWAGE_CDN_ORIGINALS_CACHE_BYTES',
  cdnOriginalsItemMaxBytes: 'STOWAGE_CDN_ORIGINALS_ITEM_MAX_BYTES',
  cdnProcessConcurrency: 'STOWAGE_CDN_PROCESS_CONCURRENCY',
  cdnProcessQueue: 'STOWAGE_CDN_PROCESS_QUEUE',
  cdnRenderTimeoutMs: 'STOWAGE_CDN_RENDER_TIMEOUT_MS',
  webhookTimeoutMs: 'STOWAGE_WEBHOOK_TIMEOUT_MS',
  webhookRetryBaseMs: 'STOWAGE_WEBHOOK_RETRY_BASE_MS',
  webhookRetryMaxMs: 'STOWAGE_WEBHOOK_RETRY_MAX_MS',
  webhookRetryForMs: 'STOWAGE_WEBHOOK_RETRY_FOR_MS',
  webhookDeliveryRetentionMs: 'STOWAGE_WEBHOOK_DELIVERY_RETENTION_MS',
  webhookConcurrency: 'STOWAGE_WEBHOOK_CONCURRENCY',
  webhookConcurrencyPerProject: 'STOWAGE_WEBHOOK_CONCURRENCY_PER_PROJECT',
  webhookBreakerFailures: 'STOWAGE_WEBHOOK_BREAKER_FAILURES',
  webhookBreakerCooldownMs: 'STOWAGE_WEBHOOK_BREAKER_COOLDOWN_MS',
  s3Bucket: 'STOWAGE_S3_BUCKET',
  s3Endpoint: 'STOWAGE_S3_ENDPOINT',
  s3Region: 'STOWAGE_S3_REGION',
  s3PublicEndpoint: 'STOWAGE_S3_PUBLIC_ENDPOINT',
  s3AccessKeyId: 'STOWAGE_S3_ACCESS_KEY_ID',
  s3SecretAccessKey: 'STOWAGE_S3_SECRET_ACCESS_KEY',
  s3ForcePathStyle: 'STOWAGE_S3_FORCE_PATH_STYLE',
  redisUrl: 'STOWAGE_REDIS_URL',
  shutdownGraceMs: 'STOWAGE_SHUTDOWN_GRACE_MS',
  headersTimeoutMs: 'STOWAGE_HEADERS_TIMEOUT_MS',
  requestTimeoutMs: 'STOWAGE_REQUEST_TIMEOUT_MS',
  uploadRequestTimeoutMs: 'STOWAGE_UPLOAD_REQUEST_TIMEOUT_MS',
  bodyIdleTimeoutMs: 'STOWAGE_BODY_IDLE_TIMEOUT_MS',
  minFreeBytes: 'STOWAGE_MIN_FREE_BYTES',
  leftoversMinAgeMs: 'STOWAGE_LEFTOVERS_MIN_AGE_MS',
  leftoversSweepMs: 'STOWAGE_LEFTOVERS_SWEEP_MS',
  addonLeaseMs: 'STOWAGE_ADDON_LEASE_MS',
  addonTimeoutMs: 'STOWAGE_ADDON_TIMEOUT_MS',
  addonConcurrency: 'STOWAGE_ADDON_CONCURRENCY',
  clamdAddress: 'STOWAGE_CLAMD_ADDRESS',
  convertDocumentConcurrency: 'STOWAGE_CONVERT_DOCUMENT_CONCURRENCY',
  convertVideoConcurrency: 'STOWAGE_CONVERT_VIDEO_CONCURRENCY',
  convertDocumentTimeoutMs: 'STOWAGE_CONVERT_DOCUMENT_TIMEOUT_MS',
  convertVideoTimeoutMs: 'STOWAGE_CONVERT_VIDEO_TIMEOUT_MS',
  convertMaxBytes: 'STOWAGE_CONVERT_MAX_BYTES',
  pluginsDir: 'STOWAGE_PLUGINS_DIR',
  removeBgModel: 'STOWAGE_REMOVE_BG_MODEL',
  removeBgMaxRssBytes: 'STOWAGE_REMOVE_BG_MAX_RSS_BYTES',
  dashboardAdminToken: 'STOWAGE_DASHBOARD_ADMIN_TOKEN',
  dashboardSessionTtlMs: 'STOWAGE_DASHBOARD_SESSION_TTL_MS',
};

export class ConfigError extends Error {}

export function envName(key: keyof Config): string {
  return ENV_NAMES[key];
}

/** Merge defaults, env and flags (flags win) and validate; throws ConfigError listing every problem. */
export function loadConfig(flags: Partial<Record<keyof Config, unknown>> = {}, env: NodeJS.ProcessEnv = process.env): Config {
  const merged: Record<string, unknown> = { ...DEFAULTS };
  for (const [key, name] of Object.entries(ENV_NAMES)) {
    const value = env[name];
    if (value !== undefined && value !== '') merged[key] = key === 'only' ? value.split(',').map((s) => s.trim()) : value;
  }
  for (const [key, value] of Object.entries(flags)) if (value !== undefined) merged[key] = value;
  const parsed = schema.safeParse(merged);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => {
      const key = String(i.path[0] ?? '');
      const source = key in ENV_NAMES ? ` (--${kebab(key)} / ${ENV_NAMES[key as keyof Config]})` : '';
      return `  ${key}${source}: ${i.message}`;
    });
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  const cfg = parsed.data;
  if (Boolean(cfg.tlsCertFile) !== Boolean(cfg.tlsKeyFile)) {
    throw new ConfigError('invalid configuration:\n  tlsCertFile and tlsKeyFile must be given together');
  }
  if (cfg.leftoversMinAgeMs <= Math.max(cfg.uploadRequestTimeoutMs, cfg.fromUrlTimeoutMs)) {
    // Younger keys may belong to an upload still on its way to committing its row.
    throw new ConfigError('invalid configuration:\n  leftoversMinAgeMs must exceed uploadRequestTimeoutMs and fromUrlTimeoutMs');
  }
  if (cfg.databaseUrl && !/^postgres(ql)?:\/\//.test(cfg.databaseUrl)) {
    throw new ConfigError('invalid configuration:\n  databaseUrl must start with postgres:// (leave empty for SQLite)');
  }
  const dataDir = path.resolve(cfg.dataDir);
  return { ...cfg, dataDir, pluginsDir: path.resolve(cfg.pluginsDir || path.join(dataDir, 'plugins')) };
}

export function kebab(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/** Public base URLs: configured ones, else derived from the host and the ports actually bound. */
export function baseUrls(cfg: Config, ports: { rest: number; upload: number; cdn: number }): { rest: string; upload: string; cdn: string } {
  const scheme = cfg.tlsCertFile ? 'https' : 'http';
  const host = cfg.host === '0.0.0.0' || cfg.host === '::' ? 'localhost' : cfg.host.includes(':') ? `[${cfg.host}]` : cfg.host;
  const def = (p: number) => `${scheme}://${host}:${p}`;
  return {
    rest: trimSlash(cfg.restBaseUrl ?? def(ports.rest)),
    upload: trimSlash(cfg.uploadBaseUrl ?? def(ports.upload)),
    cdn: trimSlash(cfg.cdnBaseUrl ?? def(ports.cdn)),
  };
}

const trimSlash = (u: string): string => u.replace(/\/+$/, '');

/**
 * Wires the stores, services, job handlers and the three HTTP surfaces into one running node.
 * Every node is stateless: all state lives in the metadata store and the blob store.
 */
import type http from 'node:http';
import type { FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';
import { baseUrls, type Config } from './config.js';
import type { AppContext } from './context.js';
import { openBlobStore } from './blobs/select.js';
import { openDb } from './db/connect.js';
import { migrate } from './db/migrations.js';
import { ProjectRepo } from './db/projects.js';
import { ProjectService } from './core/projects.js';
import { BLOB_DELETE_JOB, EXPIRY_SWEEP_JOB, FileService } from './core/files.js';
import { enqueue, JobQueue } from './jobs/queue.js';
import { Worker } from './jobs/worker.js';
import { buildRestServer } from './http/rest/server.js';
import { buildUploadServer } from './http/upload/server.js';
import { buildCdnServer } from './http/cdn/server.js';
import { loadTls } from './http/common/tls.js';
import { registerFeatures } from './features.js';
import { NodeHealth } from './http/common/health.js';
import { closeRedis, connectRedis } from './throttle/redis-client.js';

export interface RunningApp {
  ctx: AppContext;
  urls: { rest: string; upload: string; cdn: string };
  close(): Promise<void>;
}

/** Opens the stores and runs migrations: what both `serve` and the admin commands need. */
export async function openStores(config: Config, log: Logger) {
  const db = await openDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, ...(config.databaseSchema ? { schema: config.databaseSchema } : {}) });
  await migrate(db);
  const projects = new ProjectService(new ProjectRepo(db.kysely));
  log.debug({ dialect: db.dialect }, 'metadata store ready');
  return { db, projects };
}

export function createLogger(config: Config): Logger {
  // Secrets never reach logs: Authorization headers and key fields are redacted wherever they appear.
  return pino({ level: config.logLevel, redact: ['*.authorization', '*.headers.authorization', '*.secret', '*.secretKey', '*.secret_key', '*.s3SecretAccessKey'] });
}

export async function startApp(config: Config, log: Logger = createLogger(config)): Promise<RunningApp> {
  const { db, projects } = await openStores(config, log);
  const blobs = await openBlobStore(config);
  const files = new FileService(db, blobs);
  const queue = new JobQueue(db.kysely, db.dialect);
  const worker = new Worker(queue, log, config.jobPollMs, 8);
  const ctx: AppContext = { config, bases: { rest: '', upload: '', cdn: '' }, log, db, blobs, projects, files, queue, worker };
  registerCoreJobs(ctx);
  await registerFeatures(ctx);
  await connectRedis(ctx);

  const tls = loadTls(config);
  const health = new NodeHealth(ctx);
  const servers: Array<{ surface: 'rest' | 'upload' | 'cdn'; close: () => Promise<void>; port: () => number; http: http.Server }> = [];
  const ports = { rest: config.restPort, upload: config.uploadPort, cdn: config.cdnPort };
  const fastifyApps: Array<['rest' | 'upload', FastifyInstance]> = [];
  if (config.only.includes('rest')) fastifyApps.push(['rest', await buildRestServer(ctx, tls)]);
  if (config.only.includes('upload')) fastifyApps.push(['upload', await buildUploadServer(ctx, tls)]);
  for (const [surface, app] of fastifyApps) {
    health.attach(app.server);
    await app.listen({ host: config.host, port: ports[surface] });
    ports[surface] = (app.server.address() as { port: number }).port;
    servers.push({ surface, close: () => app.close(), port: () => ports[surface], http: app.server });
  }
  if (config.only.includes('cdn')) {
    const cdn = buildCdnServer(ctx, tls);
    health.attach(cdn);
    await listen(cdn, config.host, config.cdnPort);
    ports.cdn = (cdn.address() as { port: number }).port;
    servers.push({ surface: 'cdn', close: () => closeHttp(cdn), port: () => ports.cdn, http: cdn });
  }
  Object.assign(ctx.bases, baseUrls(config, ports));

  worker.start();
  const sweeper = startExpiryScheduler(ctx);
  return {
    ctx,
    urls: { ...ctx.bases },
    /**
     * Graceful stop: readiness turns 503, listeners stop accepting, in-flight requests get up to
     * shutdownGraceMs to finish (then their connections are cut), running jobs get the rest of
     * the same bound, and job leases are handed back so another node picks the work up at once.
     */
    async close() {
      clearInterval(sweeper);
      health.draining = true;
      const deadline = Date.now() + config.shutdownGraceMs;
      const closing = Promise.all(servers.map((s) => s.close()));
      for (const s of servers) s.http.closeIdleConnections();
      if (await health.waitIdle(config.shutdownGraceMs)) {
        // Connections that carried the last requests are idle keep-alives now.
        for (const s of servers) s.http.closeIdleConnections();
      } else {
        log.warn({ inFlight: health.activeRequests }, 'grace period over: closing connections with requests in flight');
        for (const s of servers) s.http.closeAllConnections();
      }
      await closing;
      const stopped = await Promise.race([worker.stop().then(() => true), delay(Math.max(0, deadline - Date.now())).then(() => false)]);
      if (!stopped) await queue.releaseLeases(worker.id).catch(() => undefined);
      await db.close();
      await closeRedis(ctx);
      blobs.close?.();
    },
  };
}

function registerCoreJobs(ctx: AppContext): void {
  ctx.worker.register(BLOB_DELETE_JOB, {
    run: async (payload) => {
      const p = payload as { projectId: number; uuid: string; blobKey: string };
      await ctx.files.reclaimBytes(p.projectId, p.uuid, p.blobKey);
    },
  });
  ctx.worker.register(EXPIRY_SWEEP_JOB, {
    leaseMs: 10 * 60 * 1000,
    run: async () => {
      const n = await ctx.files.expireUnstored(ctx.config.unstoredTtlMs);
      if (n > 0) ctx.log.info({ expired: n }, 'expired unstored files');
    },
  });
  // File events (FILE_EVENT_JOB) are consumed by the webhooks feature (src/features/webhooks.ts).
}

/**
 * Every node proposes a sweep each period under the same unique key; the queue keeps one, so
 * exactly one node runs each period's sweep.
 */
function startExpiryScheduler(ctx: AppContext): NodeJS.Timeout {
  const period = ctx.config.expirySweepMs;
  const propose = () => {
    const slot = Math.floor(Date.now() / period);
    enqueue(ctx.db.kysely, { kind: EXPIRY_SWEEP_JOB, payload: { slot }, uniqueKey: `expiry:${period}:${slot}`, maxAttempts: 3 })
      .then(() => ctx.worker.poke())
      .catch((err: unknown) => ctx.log.warn({ err }, 'could not schedule expiry sweep'));
  };
  propose();
  const timer = setInterval(propose, period);
  timer.unref();
  return timer;
}

function listen(server: http.Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

function closeHttp(server: http.Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}

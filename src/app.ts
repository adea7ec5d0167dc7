/**
 * Wires the stores, services, job handlers and the three HTTP surfaces into one running node.
 * Every node is stateless: all state lives in the metadata store and the blob store.
 */
import type http from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { baseUrls, surfaceUrl, type Config } from './config.js';
import type { AppContext } from './context.js';
import { openBlobStore } from './blobs/select.js';
import { createLogger, openStores } from './stores.js';
import { FileService } from './files/service.js';
import { JobQueue } from './jobs/queue.js';
import { queueMaintenance } from './jobs/maintenance.js';
import { schedulePeriodic } from './jobs/periodic.js';
import { leftoverSweeps } from './blobs/sweep.js';
import { listenForJobs } from './jobs/wake.js';
import { Worker } from './jobs/worker.js';
import { buildRestServer } from './http/rest/server.js';
import { buildUploadServer } from './http/upload/server.js';
import { buildCdnServer } from './http/cdn/server.js';
import { buildS3Server } from './http/s3/server.js';
import { loadTls } from './http/common/tls.js';
import { createFeatures } from './features.js';
import type { Feature, RoutePlugin } from './feature.js';
import { NodeHealth } from './http/common/health.js';
import { NodeMetrics } from './http/common/metrics.js';
import { listenMetrics, metricsHome, warnIfHidden, type MetricsListener } from './http/common/metrics-home.js';
import { nodeGauges } from './http/common/node-gauges.js';
import { applyRequestTimeouts, requestTimeoutsFor } from './http/common/timeouts.js';
import { closeRedis, openRedis, waitForRedis } from './net/redis.js';
import { configureDetectors } from './media/detect/pool.js';
import { sandboxAvailability, setToolPolicy } from './launcher/sandbox.js';

export interface RunningApp {
  ctx: AppContext;
  /** `s3`: when this node serves the S3-compatible surface. */
  urls: { rest: string; upload: string; cdn: string; s3?: string };
  /** Where this process answers GET /metrics, when that is a port of its own. */
  metricsUrl: string | null;
  close(): Promise<void>;
}

export async function startApp(config: Config, log: Logger = createLogger(config)): Promise<RunningApp> {
  setToolPolicy({ sandbox: config.toolSandbox, memoryBytes: config.toolMemoryBytes });
  // A node that cannot confine its tools refuses to run them: said once at start, not per job.
  void sandboxAvailability().then((r) => {
    if (!r.ok && config.toolSandbox === 'required') log.warn({ reason: r.reason }, 'tool sandbox unavailable: document and video conversion, gif2video and video facts at upload are refused (stowage doctor)');
  });
  const { db, projects, newerThanThisRelease } = await openStores(config, log);
  if (newerThanThisRelease.length > 0) {
    log.warn({ migrations: newerThanThisRelease }, 'the metadata store was migrated by a newer release: serving on it as it is (upgrade this node)');
  }
  const blobs = await openBlobStore(config);
  const files = new FileService(db, blobs);
  configureDetectors(config);
  const queue = new JobQueue(db);
  const worker = new Worker(queue, log, config.jobPollMs, 8);
  const redis = await openRedis(config.redisUrl, log);
  const metrics = new NodeMetrics(log);
  const home = metricsHome(config);
  warnIfHidden(home, config, log);
  if (config.pgRowCache && db.cacheWhileAlone) {
    let alone = false;
    await db.cacheWhileAlone((now) => {
      alone = now;
      log.info({ alone }, now ? 'only writer of the PostgreSQL schema: file rows cached' : 'another writer joined the PostgreSQL schema: file rows read afresh');
    });
    metrics.gauge('stowage_store_alone', 'Whether this node is its PostgreSQL schema\'s only writer and caches file rows (db/pg-alone.ts)', () => (alone ? 1 : 0));
  }
  const ctx: AppContext<FileService> = { config, bases: { rest: '', upload: '', cdn: '' }, log, db, blobs, projects, files, redis, queue, worker, metrics };
  nodeGauges(metrics, config, queue);
  await waitForRedis(redis, log);
  const features = await createFeatures(ctx);
  files.events.heardBy(features.flatMap((f) => (f.fileEventJobs ? [f.fileEventJobs] : [])));
  const maintenance = queueMaintenance(queue);
  const leftovers = leftoverSweeps(blobs, features.flatMap((f) => f.blobOwners ?? []), config, log);
  for (const jobs of [maintenance.jobs, leftovers.jobs, ...features.map((f) => f.jobs ?? {})]) worker.registerAll(jobs);
  const routes = (pick: (f: Feature) => RoutePlugin | undefined) => features.map(pick).filter((p): p is RoutePlugin => p !== undefined);

  const tls = loadTls(config);
  const health = new NodeHealth(ctx);
  const servers: Array<{ surface: 'rest' | 'upload' | 'cdn' | 's3'; close: () => Promise<void>; port: () => number; http: http.Server }> = [];
  const ports = { rest: config.restPort, upload: config.uploadPort, cdn: config.cdnPort };
  const fastifyApps: Array<['rest' | 'upload', FastifyInstance]> = [];
  if (config.only.includes('rest')) fastifyApps.push(['rest', await buildRestServer(ctx, tls, routes((f) => f.restRoutes), {
    open: routes((f) => f.openRestRoutes),
    sessions: features.flatMap((f) => (f.restSession ? [f.restSession] : [])),
    quickReads: features.flatMap((f) => f.restQuickReads ?? []),
  })]);
  if (config.only.includes('upload')) fastifyApps.push(['upload', await buildUploadServer(ctx, tls, routes((f) => f.uploadRoutes))]);
  for (const [surface, app] of fastifyApps) {
    // The matched route pattern labels the request's metrics (never the raw URL: few series). Set
    // on arrival (routing is done by then): routes that answer on the raw response skip onResponse.
    app.addHook('onRequest', (req, reply, done) => {
      metrics.routeLabel(reply.raw, req.routeOptions.url);
      done();
    });
    metrics.attach(app.server, surface, home.kind === 'surface' && home.surface === surface);
    health.attach(app.server);
    applyRequestTimeouts(app.server, requestTimeoutsFor(config, surface));
    await app.listen({ host: config.host, port: ports[surface] });
    ports[surface] = (app.server.address() as { port: number }).port;
    servers.push({ surface, close: () => app.close(), port: () => ports[surface], http: app.server });
  }
  if (config.only.includes('cdn')) {
    const cdn = buildCdnServer(ctx, tls, Object.assign({}, ...features.map((f) => f.cdn ?? {})));
    metrics.attach(cdn, 'cdn', false, { idHeaderByServer: true });
    health.attach(cdn);
    applyRequestTimeouts(cdn, requestTimeoutsFor(config, 'cdn'));
    await listen(cdn, config.host, config.cdnPort);
    ports.cdn = (cdn.address() as { port: number }).port;
    servers.push({ surface: 'cdn', close: () => closeHttp(cdn), port: () => ports.cdn, http: cdn });
  }
  let s3Url: string | undefined;
  if (config.only.includes('s3')) {
    const s3 = buildS3Server(ctx, tls, features.find((f) => f.s3)?.s3);
    metrics.attach(s3, 's3', false, { idHeaderByServer: true });
    health.attach(s3);
    applyRequestTimeouts(s3, requestTimeoutsFor(config, 's3'));
    await listen(s3, config.host, config.s3ApiPort);
    const port = (s3.address() as { port: number }).port;
    s3Url = surfaceUrl(config, port);
    servers.push({ surface: 's3', close: () => closeHttp(s3), port: () => port, http: s3 });
  }
  Object.assign(ctx.bases, baseUrls(config, ports));
  const metricsPort: MetricsListener | null = home.kind === 'port' ? await listenMetrics(metrics, config.host, home.port) : null;

  // PostgreSQL: other nodes' enqueues wake this worker (NOTIFY at their commit); polling remains the fallback.
  const listener = db.dialect === 'postgres' ? listenForJobs(config.databaseUrl, db.schema, (kind) => worker.poke(kind), log) : null;
  worker.start();
  const unschedule = [...maintenance.schedules, ...leftovers.schedules, ...features.flatMap((f) => f.schedules ?? [])].map((s) => schedulePeriodic(queue, log, s));
  return {
    ctx,
    urls: { ...ctx.bases, ...(s3Url ? { s3: s3Url } : {}) },
    metricsUrl: metricsPort?.url ?? null,
    /**
     * Graceful stop: readiness turns 503, listeners stop accepting, in-flight requests get up to
     * shutdownGraceMs to finish (then their connections are cut), running jobs get the rest of
     * the same bound, and job leases are handed back so another node picks the work up at once.
     */
    async close() {
      for (const stop of unschedule) stop();
      leftovers.stop();
      await listener?.close();
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
      await metricsPort?.close();
      const stopped = await Promise.race([worker.stop().then(() => true), delay(Math.max(0, deadline - Date.now())).then(() => false)]);
      if (!stopped) await queue.releaseLeases(worker.id).catch(() => undefined);
      await db.close();
      await closeRedis(redis);
      blobs.close?.();
    },
  };
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

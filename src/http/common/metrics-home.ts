/**
 * Where a process answers GET /metrics: on exactly one port, so each process's series are scraped
 * once, and never on the public CDN port unless asked for.
 *
 *   STOWAGE_METRICS_PORT given   a listener of its own (on STOWAGE_HOST) that serves only /metrics
 *   otherwise                    the REST port; a process without REST (`--only upload,cdn`) the
 *                                Upload API's; a process with neither (`--only cdn`, `s3`) none
 *                                (it logs how to get them)
 */
import http from 'node:http';
import type { Logger } from 'pino';
import type { Config, Surface } from '../../config.js';
import type { NodeMetrics } from './metrics.js';

export type MetricsHome = { kind: 'surface'; surface: Surface } | { kind: 'port'; port: number } | { kind: 'none' };

export function metricsHome(config: Pick<Config, 'metrics' | 'metricsPort' | 'only'>): MetricsHome {
  if (!config.metrics) return { kind: 'none' };
  if (config.metricsPort !== undefined) return { kind: 'port', port: config.metricsPort };
  const surface = (['rest', 'upload'] as const).find((s) => config.only.includes(s));
  return surface ? { kind: 'surface', surface } : { kind: 'none' };
}

export interface MetricsListener {
  url: string;
  close(): Promise<void>;
}

/** Starts the metrics-only listener of a `port` home. */
export async function listenMetrics(metrics: NodeMetrics, host: string, port: number): Promise<MetricsListener> {
  const server = http.createServer(metrics.onlyMetrics);
  // A scraper holds a keep-alive connection; it must not keep the process from stopping.
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = (server.address() as { port: number }).port;
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shown}:${bound}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Says once at startup when this process exposes no metrics although they are on. */
export function warnIfHidden(home: MetricsHome, config: Pick<Config, 'metrics'>, log: Logger): void {
  if (home.kind === 'none' && config.metrics) {
    log.warn('GET /metrics is on no port of this process (it serves neither REST nor Upload): set STOWAGE_METRICS_PORT to scrape it');
  }
}

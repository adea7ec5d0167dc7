/** The public base URLs that responses carry. */
import type { Config } from './schema.js';

/** Public base URLs: configured ones, else derived from the host and the ports actually bound. */
export function baseUrls(cfg: Config, ports: { rest: number; upload: number; cdn: number }): { rest: string; upload: string; cdn: string } {
  const def = (p: number) => surfaceUrl(cfg, p);
  return {
    rest: trimSlash(cfg.restBaseUrl ?? def(ports.rest)),
    upload: trimSlash(cfg.uploadBaseUrl ?? def(ports.upload)),
    cdn: trimSlash(cfg.cdnBaseUrl ?? def(ports.cdn)),
  };
}

/** The URL of a surface listening on `port` of the configured host (no trailing slash). */
export function surfaceUrl(cfg: Config, port: number): string {
  const scheme = cfg.tlsCertFile ? 'https' : 'http';
  const host = cfg.host === '0.0.0.0' || cfg.host === '::' ? 'localhost' : cfg.host.includes(':') ? `[${cfg.host}]` : cfg.host;
  return `${scheme}://${host}:${port}`;
}

const trimSlash = (u: string): string => u.replace(/\/+$/, '');

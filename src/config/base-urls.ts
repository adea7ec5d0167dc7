/** The public base URLs that responses carry. */
import type { Config } from './schema.js';

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

import fs from 'node:fs';
import type { Config } from '../../config.js';

export interface HttpsOptions {
  cert: Buffer;
  key: Buffer;
}

/** Reads the configured certificate and key once at start; null when TLS is off. */
export function loadTls(cfg: Config): HttpsOptions | null {
  if (!cfg.tlsCertFile || !cfg.tlsKeyFile) return null;
  return { cert: fs.readFileSync(cfg.tlsCertFile), key: fs.readFileSync(cfg.tlsKeyFile) };
}

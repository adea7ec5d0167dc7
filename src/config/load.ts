/** Merging the sources of the configuration and validating the result once, at start. */
import path from 'node:path';
import { DEFAULTS } from './defaults.js';
import { ENV_NAMES, kebab } from './env.js';
import { schema, type Config } from './schema.js';

export class ConfigError extends Error {}

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

/**
 * One typed configuration: defaults <- environment (STOWAGE_*) <- command-line flags.
 * Validated once at start; every module receives already-validated values.
 */
// The parts: each setting's type and bounds (config/schema.ts), defaults (config/defaults.ts), the
// environment variables and flags (config/env.ts), merging and validation (config/load.ts) and the
// public base URLs (config/base-urls.ts).
export { baseUrls, surfaceUrl } from './config/base-urls.js';
export { DEFAULTS } from './config/defaults.js';
export { envName, kebab } from './config/env.js';
export { ConfigError, loadConfig } from './config/load.js';
export type { Config, Surface } from './config/schema.js';

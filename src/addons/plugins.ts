/**
 * Optional plugins: packages the operator installs next to Stowage, never dependencies of it (the
 * background-removal model is AGPL-3.0; Stowage is Apache-2.0). They live in their own npm
 * project under STOWAGE_PLUGINS_DIR (default <dataDir>/plugins), are found there at run time, and
 * are loaded only by the child process that runs them.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

export interface PluginSpec {
  /** What `stowage plugin install <name>` calls it. */
  name: string;
  package: string;
  version: string;
  licence: string;
}

export const REMOVE_BG_PLUGIN: PluginSpec = { name: 'remove_bg', package: '@imgly/background-removal-node', version: '1.4.5', licence: 'AGPL-3.0' };
export const PLUGINS: readonly PluginSpec[] = [REMOVE_BG_PLUGIN];

export const installHint = (spec: PluginSpec): string => `stowage plugin install ${spec.name}`;

/** The plugin's entry file (CommonJS) under `pluginsDir`, or null when it is not installed there. */
export function resolvePlugin(pluginsDir: string, spec: PluginSpec): string | null {
  try {
    return createRequire(path.join(pluginsDir, 'package.json')).resolve(spec.package);
  } catch {
    return null;
  }
}

/** The version of sharp Stowage itself runs: the plugin gets the same (its own pin needs a download at install). */
function ownSharpVersion(): string {
  const entry = createRequire(import.meta.url).resolve('sharp');
  let dir = path.dirname(entry);
  while (!fs.existsSync(path.join(dir, 'package.json'))) dir = path.dirname(dir);
  return (JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version: string }).version;
}

/**
 * Installs a plugin from the npm registry into its own project under `pluginsDir`. Install scripts
 * are not run: onnxruntime-node ships its CPU binaries in the package (its script only fetches CUDA
 * ones from GitHub), and the plugin's old sharp pin (whose script downloads libvips) is replaced by
 * the sharp Stowage runs, whose binaries come from the registry as optional packages.
 */
export function installPlugin(pluginsDir: string, spec: PluginSpec, out: (line: string) => void): void {
  fs.mkdirSync(pluginsDir, { recursive: true });
  const manifest = {
    name: 'stowage-plugins',
    private: true,
    description: 'Optional Stowage plugins (not part of Stowage; each keeps its own licence)',
    dependencies: { [spec.package]: spec.version },
    overrides: { sharp: ownSharpVersion() },
  };
  const file = path.join(pluginsDir, 'package.json');
  const existing = fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as { dependencies?: Record<string, string> }) : {};
  manifest.dependencies = { ...(existing.dependencies ?? {}), ...manifest.dependencies };
  fs.writeFileSync(file, JSON.stringify(manifest, null, 2) + '\n');
  out(`installing ${spec.package}@${spec.version} (${spec.licence}) into ${pluginsDir} …`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const r = spawnSync(npm, ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--omit=dev'], { cwd: pluginsDir, stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`npm install failed in ${pluginsDir} (exit ${r.status ?? r.signal})`);
  if (!resolvePlugin(pluginsDir, spec)) throw new Error(`${spec.package} is not resolvable from ${pluginsDir} after the install`);
  out(`installed: ${spec.name} is available (set STOWAGE_PLUGINS_DIR=${pluginsDir} if that is not <dataDir>/plugins)`);
}

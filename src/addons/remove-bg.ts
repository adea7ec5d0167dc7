/**
 * `remove_bg`: background removal by the optional plugin `@imgly/background-removal-node` (AGPL-3.0,
 * so never a dependency: the operator installs it with `stowage plugin install remove_bg`). The
 * model runs in a child process (remove-bg/process.ts); the result is a new PNG file of the
 * project, with alpha (or the alpha mask alone for `channels: "alpha"`). `type_level` names the
 * foreground from the objects the detector threads find (remove-bg/foreground.ts).
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Config } from '../config.js';
import { installHint, REMOVE_BG_PLUGIN, resolvePlugin } from './plugins.js';
import { findObjectsAndFaces } from '../media/detect/analyse.js';
import { foregroundType } from './remove-bg/foreground.js';
import { parseRemoveBgParams, type RemoveBgParams } from './remove-bg/params.js';
import { RemoveBgProcess } from './remove-bg/process.js';
import { AddonError, type Addon } from './types.js';

export interface RemoveBgData {
  /** With `type_level` 1, 2 or latest, what the detectors found the foreground to be; else the requested `type`. */
  foreground_type: string;
}

const child = new RemoveBgProcess();

function plugin(config: Config): string {
  const entry = resolvePlugin(config.pluginsDir, REMOVE_BG_PLUGIN);
  if (!entry) {
    throw new AddonError(
      `remove_bg needs the optional plugin ${REMOVE_BG_PLUGIN.package} (${REMOVE_BG_PLUGIN.licence}, not bundled): install it with \`${installHint(REMOVE_BG_PLUGIN)}\` (plugins dir: ${config.pluginsDir})`,
    );
  }
  return entry;
}

export const removeBg: Addon<RemoveBgParams, RemoveBgData> = {
  name: 'remove_bg',
  version: '1.0',
  accepts: 'image',
  makesFile: true,
  parseParams: parseRemoveBgParams,
  async run({ file, path: input, signal, config }, params) {
    const entry = plugin(config);
    // The model files sit next to the entry (dist/); the plugin's default looks under the cwd.
    const publicPath = pathToFileURL(path.dirname(entry)).href + '/';
    // The classification runs in the detector threads while the child cuts the subject out.
    const level = params.typeLevel;
    const [out, foreground] = await Promise.all([
      child.run({ input, params, pluginEntry: entry, publicPath, model: config.removeBgModel }, signal, config.removeBgMaxRssBytes),
      level === 'none' ? params.type : findObjectsAndFaces({ path: input, mime: file.mimeType }, file.uuid, config.detectTimeoutMs).then((found) => foregroundType(found, level)),
    ]);
    const stem = file.originalFilename.replace(/\.[^.]*$/, '') || 'image';
    return {
      data: { foreground_type: foreground },
      file: { bytes: Buffer.from(out.png), filename: `${stem}.png`, mimeType: 'image/png' },
    };
  },
  async probe(config) {
    const entry = resolvePlugin(config.pluginsDir, REMOVE_BG_PLUGIN);
    return entry
      ? { ok: true, detail: `plugin ${REMOVE_BG_PLUGIN.package} found in ${config.pluginsDir}` }
      : { ok: false, detail: `plugin ${REMOVE_BG_PLUGIN.package} not installed in ${config.pluginsDir} (\`${installHint(REMOVE_BG_PLUGIN)}\`)` };
  },
};

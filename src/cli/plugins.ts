/** `stowage plugin install|list`: optional plugins (e.g. remove_bg's model), installed apart from Stowage. */
import type { Command } from 'commander';
import { loadConfig } from '../config.js';
import { installPlugin, PLUGINS, resolvePlugin } from '../addons/plugins.js';

export function registerPluginCommands(program: Command): void {
  const plugin = program.command('plugin').description('optional plugins installed next to Stowage (never bundled: each keeps its own licence)');
  plugin
    .command('install <name>')
    .description(`install a plugin from the npm registry (${PLUGINS.map((p) => p.name).join(', ')})`)
    .option('--data-dir <dir>', 'data directory; plugins go to <dir>/plugins unless --plugins-dir [STOWAGE_DATA_DIR]')
    .option('--plugins-dir <dir>', 'plugins directory [STOWAGE_PLUGINS_DIR]')
    .action((name: string, opts: Record<string, unknown>) => {
      const spec = PLUGINS.find((p) => p.name === name);
      if (!spec) throw new Error(`unknown plugin "${name}" (known: ${PLUGINS.map((p) => p.name).join(', ')})`);
      const config = loadConfig({ dataDir: opts['dataDir'], pluginsDir: opts['pluginsDir'], logLevel: 'warn' });
      installPlugin(config.pluginsDir, spec, (line) => process.stdout.write(line + '\n'));
    });
  plugin
    .command('list')
    .description('show which plugins are installed')
    .option('--data-dir <dir>', 'data directory [STOWAGE_DATA_DIR]')
    .option('--plugins-dir <dir>', 'plugins directory [STOWAGE_PLUGINS_DIR]')
    .action((opts: Record<string, unknown>) => {
      const config = loadConfig({ dataDir: opts['dataDir'], pluginsDir: opts['pluginsDir'], logLevel: 'warn' });
      for (const p of PLUGINS) {
        const entry = resolvePlugin(config.pluginsDir, p);
        process.stdout.write(`${p.name}  ${p.package}@${p.version} (${p.licence})  ${entry ? 'installed' : 'not installed'} in ${config.pluginsDir}\n`);
      }
    });
}

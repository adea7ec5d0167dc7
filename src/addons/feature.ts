/**
 * Add-ons: REST `/addons/{name}/execute/` and its status, durable executions writing
 * `appdata.<name>`, the project's add-ons run on every upload, and a start-up check of what each
 * add-on needs (clamd, the background-removal plugin). The add-ons themselves: ./index.ts.
 */
import type { AppContext } from '../context.js';
import type { Feature } from '../feature.js';
import { nowUs } from '../core/time.js';
import { ADDONS } from './index.js';
import { addonRoutes } from './rest.js';
import { addonJob } from './runner.js';
import { AddonService } from './service.js';

const PRUNE_PERIOD_MS = 24 * 3600_000;
/** Finished executions are kept this long; their status answers `unknown` afterwards. */
const EXECUTION_RETENTION_MS = 7 * 24 * 3600_000;

export function addonsFeature(ctx: AppContext): Feature {
  const addons = new AddonService(ctx);
  ctx.files.onUpload((trx, file, initiator) => addons.onUpload(trx, file, initiator));
  void probeAll(ctx);
  return {
    name: 'addons',
    restRoutes: addonRoutes(addons),
    jobs: {
      'addon.execute': addonJob(ctx, addons.repo),
      'addons.prune': { run: () => addons.repo.prune(nowUs() - EXECUTION_RETENTION_MS * 1000) },
    },
    schedules: [{ kind: 'addons.prune', periodMs: PRUNE_PERIOD_MS, firstAfterMs: 10_000 }],
  };
}

/** One log line per add-on that can check its dependencies (clamd reachable, plugin installed). */
async function probeAll(ctx: AppContext): Promise<void> {
  for (const addon of ADDONS) {
    if (!addon.probe) continue;
    const r = await addon.probe(ctx.config).catch((err: unknown) => ({ ok: false, detail: err instanceof Error ? err.message : String(err) }));
    if (r.ok) ctx.log.info({ addon: addon.name }, `add-on ${addon.name}: ${r.detail}`);
    else ctx.log.warn({ addon: addon.name }, `add-on ${addon.name} unavailable: ${r.detail}`);
  }
}

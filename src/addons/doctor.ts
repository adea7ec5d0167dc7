/** `stowage doctor` checks of the add-ons that probe what they need (clamd for the virus scan). */
import type { Config } from '../config.js';
import type { DoctorCheck } from '../doctor/check.js';
import { ADDONS } from './index.js';

export const addonDoctorChecks: DoctorCheck[] = ADDONS.flatMap((addon) => {
  const probe = addon.probe;
  if (!probe) return [];
  return [
    {
      name: `add-on ${addon.name}`,
      required: false,
      disables: `the ${addon.name} add-on: /addons/${addon.name}/execute/ and add-ons on upload record an error (see docs/addons.md)`,
      async run(config: Config) {
        const r = await probe(config);
        if (!r.ok) throw new Error(r.detail);
        return r.detail;
      },
    },
  ];
});

/**
 * `uc_clamav_virus_scan`: the file's bytes through a real ClamAV daemon (INSTREAM over its unix
 * socket or TCP, STOWAGE_CLAMD_ADDRESS). `purge_infected` removes an infected file; an infection
 * also records `file.infected`.
 */
import type { Config } from '../config.js';
import { clamdCommand, describeAddress, parseClamdAddress, scanFile, ClamdError } from './clamd.js';
import { boolField, paramsObject } from './params.js';
import { AddonError, type Addon } from './types.js';

export interface ClamavParams {
  purge_infected: boolean;
}

export interface ClamavData {
  infected: boolean;
  infected_with?: string;
}

export const clamavVirusScan: Addon<ClamavParams, ClamavData> = {
  name: 'uc_clamav_virus_scan',
  version: '1.0.1',
  accepts: 'any',
  parseParams(raw) {
    const p = paramsObject(raw, ['purge_infected']);
    return { purge_infected: boolField(p, 'purge_infected', false) };
  },
  async run({ path, signal, config }, params) {
    const address = addressOf(config);
    const result = await scanFile(address, path, signal).catch((err: unknown) => {
      // A malformed setting or a refusal by clamd (e.g. past its StreamMaxLength) will not mend by retrying.
      if (err instanceof ClamdError && /answered/.test(err.message)) throw new AddonError(err.message);
      throw err;
    });
    if (!result.infected) return { data: { infected: false } };
    return { data: { infected: true, infected_with: result.signature }, infected: true, removeTarget: params.purge_infected };
  },
  async probe(config) {
    const address = addressOf(config);
    const version = await clamdCommand(address, 'VERSION', AbortSignal.timeout(3000));
    return { ok: true, detail: `clamd reachable at ${describeAddress(address)} (${version})` };
  },
};

function addressOf(config: Config) {
  try {
    return parseClamdAddress(config.clamdAddress);
  } catch (err) {
    throw new AddonError(err instanceof Error ? err.message : String(err));
  }
}

/** Per-project add-on settings: which add-ons run on every upload (set by `stowage project set`). */
import { nowUs } from '../core/time.js';
import type { Db } from '../db/connect.js';
import { addonNames } from './index.js';
import { AddonRepo } from './repo.js';
import { adminErrors } from '../core/error-catalogue/admin.js';

export class AddonSettings {
  private readonly repo: AddonRepo;

  constructor(db: Db) {
    this.repo = new AddonRepo(db);
  }

  /** `names`: add-on names, or [] for none. Unknown names are refused, listing the known ones. */
  async setOnUpload(projectId: number, names: string[]): Promise<string[]> {
    const known = addonNames();
    for (const n of names) if (!known.includes(n)) throw adminErrors.unknownAddon(n, known);
    const unique = [...new Set(names)];
    await this.repo.setOnUpload(projectId, unique, nowUs());
    return unique;
  }

  onUpload(projectId: number): Promise<string[]> {
    return this.repo.onUpload(projectId);
  }
}

/** The CLI's spelling: `a,b,c`, or `none` / empty for none. */
export function parseAddonList(text: string): string[] {
  const t = text.trim();
  if (t === '' || t === 'none') return [];
  return t.split(',').map((s) => s.trim()).filter(Boolean);
}

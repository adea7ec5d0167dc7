/**
 * A group entry's operations as stored and returned (`default_effects`), kept as the client wrote
 * them: `-/resize/x800/-/preview/` is stored as `resize/x800/-/preview/`.
 */
import { parsePlan, type Plan } from '../media/plan.js';

/** `['-','resize','x800','-','preview']` -> `resize/x800/-/preview/`. */
export function effectsText(written: string[]): string {
  if (written.length === 0) return '';
  return written.slice(1).join('/') + '/';
}

/** Stored default_effects back to a plan (they were checked when the group was created). */
export function effectsPlan(effects: string): Plan {
  const parts = effects.split('/').filter((s) => s !== '');
  return parsePlan(parts.length === 0 ? [] : ['-', ...parts].map((s) => decodeURIComponent(s)));
}

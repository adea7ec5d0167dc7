/**
 * Named filters (wire-reference §3.4). The public service does not publish its recipes, so each
 * name here is our own distinct, deterministic colour grade built from a few photographic knobs
 * and applied as one affine colour map. `amount` blends from identity (0) through the full look
 * (100) to an exaggerated one (200); negative amounts push the opposite way.
 */
import type { OpDef } from '../pipeline/types.js';
import { bad, expectCount, int } from '../pipeline/params.js';
import { IDENTITY, mul, saturationMatrix, type Mat3 } from '../pipeline/pixels.js';

/** saturation, contrast, brightness, red/green/blue gain, sepia mix, fade (lifted blacks). */
type Recipe = readonly [sat: number, con: number, bri: number, r: number, g: number, b: number, sepia: number, fade: number];

export const FILTERS: Readonly<Record<string, Recipe>> = {
  adaris: [0.8, 1.1, 5, 1.05, 1.0, 0.92, 0, 0.1],
  briaril: [1.2, 1.05, 8, 1.0, 1.03, 1.08, 0, 0],
  calarel: [0.6, 0.95, 10, 1.08, 1.02, 0.9, 0.2, 0.2],
  carris: [1.3, 1.15, 0, 1.05, 0.98, 0.95, 0, 0],
  cynarel: [0.9, 1.0, 0, 0.9, 1.05, 1.1, 0, 0.05],
  cyren: [1.1, 1.2, -5, 0.92, 1.0, 1.12, 0, 0],
  elmet: [0.7, 1.25, -8, 1.0, 1.0, 1.0, 0, 0.15],
  elonni: [1.0, 0.9, 12, 1.06, 1.04, 1.0, 0.1, 0.1],
  enzana: [1.4, 1.1, 4, 1.1, 1.0, 0.9, 0, 0],
  erydark: [0.9, 1.3, -15, 1.0, 0.95, 0.95, 0, 0],
  fenralan: [0.5, 1.05, 0, 1.0, 1.0, 1.0, 0.5, 0.1],
  ferand: [1.15, 1.0, 6, 0.95, 1.08, 0.95, 0, 0],
  galen: [0.85, 1.1, 3, 1.1, 1.05, 0.85, 0.15, 0],
  gavin: [0.0, 1.2, 0, 1.0, 1.0, 1.0, 0, 0.05],
  gethriel: [1.05, 0.85, 15, 1.0, 1.0, 1.05, 0, 0.25],
  iorill: [1.25, 1.05, 0, 0.9, 0.95, 1.15, 0, 0.05],
  iothari: [0.75, 1.15, -4, 1.12, 0.96, 0.9, 0.1, 0],
  iselva: [1.1, 0.95, 5, 0.96, 1.1, 1.0, 0, 0.1],
  jadis: [0.6, 1.3, -10, 0.95, 1.05, 1.05, 0, 0],
  lavra: [1.2, 1.0, 8, 1.08, 0.92, 1.1, 0, 0.05],
  misiara: [0.95, 1.1, 2, 1.0, 0.9, 1.12, 0, 0],
  namala: [1.35, 1.2, -3, 1.0, 1.0, 0.9, 0, 0],
  nerion: [0.4, 1.0, 6, 1.0, 1.0, 1.0, 0.3, 0.2],
  nethari: [1.0, 1.25, 0, 1.05, 1.05, 0.9, 0, 0.1],
  pamaya: [1.15, 0.9, 10, 1.12, 1.0, 0.98, 0.05, 0.15],
  sarnar: [0.9, 1.05, -6, 0.9, 1.0, 1.0, 0, 0],
  sedis: [0.0, 1.0, 0, 1.0, 1.0, 1.0, 1.0, 0],
  sewen: [1.05, 1.1, 4, 1.0, 1.06, 0.92, 0, 0],
  sorahel: [0.8, 0.95, 0, 0.92, 0.92, 1.15, 0, 0.2],
  sorlen: [1.5, 1.05, 0, 1.0, 1.0, 1.0, 0, 0],
  tarian: [0.7, 1.2, 5, 1.15, 1.0, 0.88, 0.25, 0],
  thellassan: [1.2, 0.95, 0, 0.85, 1.0, 1.2, 0, 0.1],
  varriel: [0.65, 1.0, 12, 1.05, 1.0, 1.0, 0.35, 0.3],
  varven: [1.0, 1.35, -12, 1.0, 0.98, 1.04, 0, 0],
  vevera: [1.1, 1.0, 0, 1.1, 1.1, 0.85, 0.05, 0.05],
  virkas: [0.0, 1.4, -5, 1.0, 1.0, 1.0, 0, 0.1],
  yedis: [1.3, 0.9, 6, 0.95, 1.05, 1.1, 0, 0.15],
  yllara: [0.9, 1.05, 10, 1.1, 1.02, 0.94, 0.1, 0.05],
  zatvel: [0.55, 1.15, -2, 0.98, 1.02, 1.0, 0.2, 0.25],
  zevcen: [1.25, 1.1, 2, 1.04, 0.94, 1.06, 0, 0],
};

const SEPIA: Mat3 = [0.393, 0.769, 0.189, 0.349, 0.686, 0.168, 0.272, 0.534, 0.131];

/** Full-strength colour map of a recipe. */
export function recipeMap(r: Recipe): { m: Mat3; off: [number, number, number] } {
  const [sat, con, bri, rg, gg, bg, sepia, fade] = r;
  const sepiaMix = IDENTITY.map((v, i) => (1 - sepia) * v + sepia * SEPIA[i]!) as Mat3;
  const fadeK = 1 - fade / 4;
  const k = con * fadeK;
  const m = mul([rg * k, 0, 0, 0, gg * k, 0, 0, 0, bg * k], mul(saturationMatrix(sat), sepiaMix));
  const o = 127.5 * (1 - con) * fadeK + fade * 64 + bri;
  return { m, off: [o, o, o] };
}

export interface FilterArgs { name: string; amount: number }
export const filter: OpDef<FilterArgs> = {
  kind: 'transform',
  parse(p) {
    expectCount('filter', p, 1, 2);
    const name = p[0]!;
    if (!Object.hasOwn(FILTERS, name)) throw bad('filter', `unknown filter name "${name}"`);
    return { name, amount: p.length === 2 ? int('filter', 'amount', p[1], -100, 200) : 100 };
  },
  async apply(s, a) {
    if (a.amount === 0) return;
    const { m, off } = recipeMap(FILTERS[a.name]!);
    const t = a.amount / 100;
    const blended = m.map((v, i) => IDENTITY[i]! + t * (v - IDENTITY[i]!)) as Mat3;
    await s.mapPixels({ kind: 'affine', m: blended, off: [off[0] * t, off[1] * t, off[2] * t] });
  },
};

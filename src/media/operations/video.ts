/**
 * Operations that are markers rather than pixel work: gif2video (handled by render.ts through
 * ffmpeg, see ../video.ts), and the info outputs detect_faces and main_colors (render.ts answers
 * them with JSON: faces from the detector, colours by median cut, see ../detect/).
 */
import type { OpDef } from '../pipeline/types.js';
import { expectCount, int, none } from '../pipeline/params.js';

export const gif2video: OpDef<null> = {
  kind: 'setting', videoCompanion: true,
  parse: (p) => none('gif2video', p),
  apply() {},
};

export const detect_faces: OpDef<null> = {
  kind: 'setting',
  parse: (p) => none('detect_faces', p),
  apply() {},
};

/** Most colours main_colors answers (median cut over a 64x64 sample). */
export const MAX_MAIN_COLORS = 32;
/** `-/main_colors/[n/]`, default 5. */
export const main_colors: OpDef<number> = {
  kind: 'setting',
  parse(p) {
    expectCount('main_colors', p, 0, 1);
    return p.length ? int('main_colors', 'number of colours', p[0], 1, MAX_MAIN_COLORS) : 5;
  },
  apply() {},
};

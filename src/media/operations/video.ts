/**
 * Operations that are markers rather than pixel work: gif2video (handled by render.ts through
 * ffmpeg, see ../video.ts) and detect_faces (needs the detection add-on).
 */
import type { OpDef } from '../pipeline/types.js';
import { expectCount, none, unavailable } from '../pipeline/params.js';

export const gif2video: OpDef<null> = {
  kind: 'setting', videoCompanion: true,
  parse: (p) => none('gif2video', p),
  apply() {},
};

export const detect_faces: OpDef<never> = {
  kind: 'setting',
  parse(p) {
    expectCount('detect_faces', p, 0, 0);
    throw unavailable('detect_faces', 'face detection');
  },
  apply() {},
};

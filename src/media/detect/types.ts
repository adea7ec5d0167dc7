/**
 * What the detectors find, in pixel coordinates of the image they were given. Plain data: these
 * travel between the detector worker threads and the main thread.
 */
export interface Detection {
  x: number;
  y: number;
  width: number;
  height: number;
  /** 0..1 */
  score: number;
  /** `face`, or the COCO class name of an object (`person`, `cat`, `car`, …). */
  label: string;
}

export type DetectWhat = 'faces' | 'objects';

/** nsfwjs' five classes, each 0..1 (they sum to 1). */
export interface NsfwScores { drawing: number; hentai: number; neutral: number; porn: number; sexy: number }

/** Names of the models, as add-ons report them (LabelModelVersion, ModerationModelVersion). */
export const OBJECT_MODEL = 'human-centernet-coco-3.3.6';
export const FACE_MODEL = 'human-blazeface-3.3.6';
export const NSFW_MODEL = 'nsfwjs-mobilenet_v2_mid-4.4.0';

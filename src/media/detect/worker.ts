/**
 * Runs inside a worker thread of pool.ts: model inference on the tfjs WASM backend (CPU, no
 * native addon, nothing downloaded). Models ship inside their npm packages and are loaded once
 * per thread, lazily, on the first task that needs them:
 *   - faces: BlazeFace and objects: CenterNet (COCO, 80 classes), from @vladmandic/human/models
 *   - NSFW classes: nsfwjs' MobileNetV2-mid, whose weights nsfwjs ships as base64 inside JS files
 * Errors travel back as values (structured cloning drops an Error's fields).
 */
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Detection, DetectWhat, NsfwScores } from './types.js';
import { mainColors } from './colors.js';

const require = createRequire(import.meta.url);

export type DetectTask =
  | { op: DetectWhat; data: Uint8Array; width: number; height: number }
  | { op: 'nsfw'; data: Uint8Array; width: number; height: number }
  | { op: 'colors'; data: Uint8Array; width: number; height: number; count: number }
  | { op: 'warm' };

export type DetectReply =
  | { ok: true; detections: Detection[] }
  | { ok: true; nsfw: NsfwScores }
  | { ok: true; colors: [number, number, number][] }
  | { ok: true; warm: true }
  | { ok: false; message: string };

/* Minimal shapes of the untyped CommonJS modules we use (typed here, at their one entry point). */
interface Tensor { dispose(): void; data(): Promise<Float32Array | Int32Array | Uint8Array> }
interface Tf {
  env(): { set(flag: string, value: boolean): void };
  setBackend(name: string): Promise<boolean>;
  ready(): Promise<void>;
  getBackend(): string;
  tensor(values: Uint8Array | Int32Array | Float32Array, shape: number[], dtype: string): Tensor;
  tidy<T>(fn: () => T): T;
  io: {
    registerLoadRouter(router: (url: string | string[]) => unknown): void;
    getModelArtifactsForJSON(json: unknown, loadWeights: (manifest: WeightGroup[]) => Promise<[unknown[], ArrayBuffer]>): Promise<unknown>;
    fromMemory(artifacts: unknown): unknown;
  };
}
interface WeightGroup { paths: string[]; weights: unknown[] }
interface GraphModel { predict(input: Tensor): Tensor }
interface HumanResult {
  face: { box: [number, number, number, number]; boxScore?: number; score: number }[];
  object: { box: [number, number, number, number]; score: number; label: string }[];
}
interface Human { load(): Promise<void>; detect(input: Tensor, config?: unknown): Promise<HumanResult & { error?: string | null }> }

let tfReady: Promise<Tf> | null = null;
let humanReady: Promise<Human> | null = null;
let nsfwReady: Promise<GraphModel> | null = null;

function packageDir(name: string, entry = name): string {
  // Resolve through the package's main entry: some packages do not export package.json.
  let dir = path.dirname(require.resolve(entry));
  while (path.basename(dir) !== name.split('/').pop()) dir = path.dirname(dir);
  return dir;
}

/** tfjs-core with the WASM backend, one thread per worker (the pool bounds concurrency). */
function loadTf(): Promise<Tf> {
  tfReady ??= (async () => {
    const tf = require('@tensorflow/tfjs-core') as Tf;
    require('@tensorflow/tfjs-converter');
    const wasm = require('@tensorflow/tfjs-backend-wasm') as { setWasmPaths(p: string): void; setThreadsCount?(n: number): void };
    tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false);
    wasm.setWasmPaths(path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm')) + path.sep);
    // Models are read from the installed packages: `file://` URLs load from disk, never fetch.
    tf.io.registerLoadRouter((url) => {
      if (typeof url !== 'string' || !url.startsWith('file://')) return null;
      const file = url.slice('file://'.length);
      return {
        load: () => tf.io.getModelArtifactsForJSON(JSON.parse(readFileSync(file, 'utf8')), async (manifest) => {
          const specs = manifest.flatMap((g) => g.weights);
          const bytes = Buffer.concat(manifest.flatMap((g) => g.paths.map((p) => readFileSync(path.join(path.dirname(file), p)))));
          return [specs, bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer];
        }),
      };
    });
    if (!(await tf.setBackend('wasm'))) throw new Error('the tfjs WASM backend could not start');
    await tf.ready();
    return tf;
  })();
  tfReady.catch(() => { tfReady = null; });
  return tfReady;
}

/** Human configured for still images: no frame skipping or result caching between calls. */
const HUMAN_CONFIG = {
  backend: 'wasm',
  debug: false,
  cacheSensitivity: 0,
  filter: { enabled: false },
  face: {
    enabled: true,
    detector: { rotation: false, maxDetected: 50, minConfidence: 0.5, iouThreshold: 0.2, scale: 1.0, skipFrames: 0, skipTime: 0 },
    mesh: { enabled: false }, iris: { enabled: false }, description: { enabled: false }, emotion: { enabled: false },
    antispoof: { enabled: false }, liveness: { enabled: false }, attention: { enabled: false },
  },
  body: { enabled: false }, hand: { enabled: false }, gesture: { enabled: false }, segmentation: { enabled: false },
  object: { enabled: true, modelPath: 'centernet.json', minConfidence: 0.3, iouThreshold: 0.4, maxDetected: 50, skipFrames: 0, skipTime: 0 },
};

function loadHuman(): Promise<Human> {
  humanReady ??= (async () => {
    await loadTf();
    const dir = packageDir('@vladmandic/human');
    // The package's export map hides the node-wasm build; it sits next to its main entry.
    const { Human: HumanClass } = require(path.join(dir, 'dist', 'human.node-wasm.js')) as { Human: new (c: unknown) => Human };
    const human = new HumanClass({ ...HUMAN_CONFIG, modelBasePath: 'file://' + path.join(dir, 'models') + path.sep });
    await human.load();
    return human;
  })();
  humanReady.catch(() => { humanReady = null; });
  return humanReady;
}

/**
 * nsfwjs' bundled weights are browserify modules wrapping one base64 string each; requiring them
 * makes V8 parse megabytes of source (tens of seconds), so the string is cut out of the file.
 */
function bundledBase64(file: string): Buffer {
  const text = readFileSync(file, 'latin1');
  const marker = 'exports="';
  const start = text.indexOf(marker);
  const end = text.indexOf('"', start + marker.length);
  if (start < 0 || end < 0) throw new Error(`no weights found in ${file}`);
  return Buffer.from(text.slice(start + marker.length, end), 'base64');
}

function loadNsfw(): Promise<GraphModel> {
  nsfwReady ??= (async () => {
    const tf = await loadTf();
    const { loadGraphModel } = require('@tensorflow/tfjs-converter') as { loadGraphModel(h: unknown): Promise<GraphModel> };
    const dir = path.join(packageDir('nsfwjs'), 'dist', 'models', 'mobilenet_v2_mid');
    const json = require(path.join(dir, 'model.min.js')) as Record<string, unknown> & { weightsManifest: WeightGroup[] };
    const weights = Buffer.concat(json.weightsManifest.flatMap((g) => g.paths.map((p) => bundledBase64(path.join(dir, `${p}.min.js`)))));
    const model = await loadGraphModel(tf.io.fromMemory({
      modelTopology: json['modelTopology'], format: json['format'], generatedBy: json['generatedBy'], convertedBy: json['convertedBy'],
      userDefinedMetadata: json['userDefinedMetadata'],
      weightSpecs: json.weightsManifest.flatMap((g) => g.weights),
      weightData: weights.buffer.slice(weights.byteOffset, weights.byteOffset + weights.byteLength),
    }));
    return model;
  })();
  nsfwReady.catch(() => { nsfwReady = null; });
  return nsfwReady;
}

const NSFW_SIZE = 224;

/** The letterbox's fill: mid-grey, neither an edge nor a colour for the model to read. */
const PAD_GREY = 127;

/**
 * The image in the top-left corner of a square of grey. CenterNet reads a square input: fed the
 * image as it is, Human squeezes it to the square, and squeezed animals go unrecognised (a cat
 * filling a 4:3 photo: 0.28 squeezed, 0.45 letterboxed; a kitten's head close up: no cat
 * squeezed, 0.62 letterboxed). Boxes found on the square are the image's own pixels (boxOf
 * clamps them).
 */
function letterboxed(data: Uint8Array, width: number, height: number): { data: Uint8Array; side: number } {
  const side = Math.max(width, height);
  if (side === width && side === height) return { data, side };
  const out = new Uint8Array(side * side * 3).fill(PAD_GREY);
  for (let y = 0; y < height; y++) out.set(data.subarray(y * width * 3, (y + 1) * width * 3), y * side * 3);
  return { data: out, side };
}

async function detect(what: DetectWhat, data: Uint8Array, width: number, height: number): Promise<Detection[]> {
  const [tf, human] = await Promise.all([loadTf(), loadHuman()]);
  const square = what === 'objects' ? letterboxed(data, width, height) : null;
  const input = square ? tf.tensor(square.data, [1, square.side, square.side, 3], 'int32') : tf.tensor(data, [1, height, width, 3], 'int32');
  try {
    const r = await human.detect(input, { face: { enabled: what === 'faces' }, object: { enabled: what === 'objects' } });
    if (r.error) throw new Error(r.error);
    if (what === 'faces') {
      return r.face.map((f) => ({ ...boxOf(f.box, width, height), score: f.boxScore ?? f.score, label: 'face' }));
    }
    // A box that starts in the grey margin is about nothing of the image.
    return r.object.filter((o) => o.box[0] < width && o.box[1] < height)
      .map((o) => ({ ...boxOf(o.box, width, height), score: o.score, label: o.label }));
  } finally {
    input.dispose();
  }
}

/** Clamps a model box to the image, in whole pixels. */
function boxOf(b: readonly number[], width: number, height: number): { x: number; y: number; width: number; height: number } {
  const x = Math.max(0, Math.round(b[0]!));
  const y = Math.max(0, Math.round(b[1]!));
  const x2 = Math.min(width, Math.round(b[0]! + b[2]!));
  const y2 = Math.min(height, Math.round(b[1]! + b[3]!));
  return { x, y, width: Math.max(1, x2 - x), height: Math.max(1, y2 - y) };
}

/** The pool hands us 224x224 RGB (resized by libvips on the main side). */
async function nsfw(data: Uint8Array, width: number, height: number): Promise<NsfwScores> {
  if (width !== NSFW_SIZE || height !== NSFW_SIZE) throw new Error(`nsfw input must be ${NSFW_SIZE}x${NSFW_SIZE}`);
  const [tf, model] = await Promise.all([loadTf(), loadNsfw()]);
  const scaled = new Float32Array(data.length);
  for (let i = 0; i < data.length; i++) scaled[i] = data[i]! / 255;
  const out = tf.tidy(() => model.predict(tf.tensor(scaled, [1, NSFW_SIZE, NSFW_SIZE, 3], 'float32')));
  try {
    const p = await out.data();
    return { drawing: p[0]!, hentai: p[1]!, neutral: p[2]!, porn: p[3]!, sexy: p[4]! };
  } finally {
    out.dispose();
  }
}

export default async function run(task: DetectTask): Promise<DetectReply> {
  try {
    switch (task.op) {
      case 'faces':
      case 'objects':
        return { ok: true, detections: await detect(task.op, task.data, task.width, task.height) };
      case 'nsfw':
        return { ok: true, nsfw: await nsfw(task.data, task.width, task.height) };
      case 'colors':
        return { ok: true, colors: mainColors(task.data, task.count) };
      case 'warm':
        await Promise.all([loadHuman(), loadNsfw()]);
        return { ok: true, warm: true };
    }
  } catch (e) {
    return { ok: false, message: (e as Error)?.message ?? String(e) };
  }
}

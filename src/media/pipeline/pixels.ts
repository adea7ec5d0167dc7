/**
 * Pixel arithmetic on materialised 8-bit sRGB buffers. Colour operations are written as an
 * affine map or a lookup table so every recipe is exact, deterministic and order-independent of
 * sharp's internal pipeline. Alpha (4th channel) is never touched. Operations describe the map as
 * a PixelKernel (plain data) and the stage runs it in a worker thread (decode-pool.ts): a loop over
 * every pixel of a large image must not hold the main thread.
 */
/** Decoded pixels, 8 bits per channel, rows packed. */
export interface RawImage { data: Buffer; width: number; height: number; channels: 3 | 4 }

export type Mat3 = [number, number, number, number, number, number, number, number, number];
export const IDENTITY: Mat3 = [1, 0, 0, 0, 1, 0, 0, 0, 1];
/** Rec. 709 luma weights, the ones sRGB uses. */
export const LUMA = [0.2126, 0.7152, 0.0722] as const;

export function mul(a: Mat3, b: Mat3): Mat3 {
  const o = new Array<number>(9) as Mat3;
  for (let r = 0; r < 3; r++) {
    for (let c = 0; c < 3; c++) o[r * 3 + c] = a[r * 3]! * b[c]! + a[r * 3 + 1]! * b[3 + c]! + a[r * 3 + 2]! * b[6 + c]!;
  }
  return o;
}

export function saturationMatrix(s: number): Mat3 {
  const [lr, lg, lb] = LUMA;
  return [
    lr + s * (1 - lr), lg - s * lg, lb - s * lb,
    lr - s * lr, lg + s * (1 - lg), lb - s * lb,
    lr - s * lr, lg - s * lg, lb + s * (1 - lb),
  ];
}

const clamp8 = (v: number): number => (v < 0 ? 0 : v > 255 ? 255 : Math.round(v));

/** out = M·rgb + off, in place. */
export function affine(img: RawImage, m: Mat3, off: readonly [number, number, number]): RawImage {
  const d = img.data;
  const step = img.channels;
  for (let i = 0; i < d.length; i += step) {
    const r = d[i]!, g = d[i + 1]!, b = d[i + 2]!;
    d[i] = clamp8(m[0] * r + m[1] * g + m[2] * b + off[0]);
    d[i + 1] = clamp8(m[3] * r + m[4] * g + m[5] * b + off[1]);
    d[i + 2] = clamp8(m[6] * r + m[7] * g + m[8] * b + off[2]);
  }
  return img;
}

/** A per-channel-value map as a 256-entry table (computed where `f` lives: functions do not travel). */
export function lutTable(f: (v: number) => number): Uint8Array {
  const table = new Uint8Array(256);
  for (let v = 0; v < 256; v++) table[v] = clamp8(f(v));
  return table;
}

export function lut(img: RawImage, table: Uint8Array): RawImage {
  const d = img.data;
  const step = img.channels;
  for (let i = 0; i < d.length; i += step) {
    d[i] = table[d[i]!]!;
    d[i + 1] = table[d[i + 1]!]!;
    d[i + 2] = table[d[i + 2]!]!;
  }
  return img;
}

/** Saturates dull pixels more than already vivid ones (k = -1..5). */
export function vibrance(img: RawImage, k: number): RawImage {
  const d = img.data;
  const step = img.channels;
  for (let i = 0; i < d.length; i += step) {
    const r = d[i]!, g = d[i + 1]!, b = d[i + 2]!;
    const max = Math.max(r, g, b);
    const sat = (max - Math.min(r, g, b)) / 255;
    const f = 1 + k * (1 - sat);
    const y = LUMA[0] * r + LUMA[1] * g + LUMA[2] * b;
    d[i] = clamp8(y + (r - y) * f);
    d[i + 1] = clamp8(y + (g - y) * f);
    d[i + 2] = clamp8(y + (b - y) * f);
  }
  return img;
}

/** Unsharp mask: out = in + amount·(in − blurred); a negative amount softens. */
export function unsharp(img: RawImage, blurred: Uint8Array, amount: number): RawImage {
  const d = img.data;
  const step = img.channels;
  for (let i = 0; i < d.length; i += step) {
    for (let c = 0; c < 3; c++) d[i + c] = clamp8(d[i + c]! + amount * (d[i + c]! - blurred[i + c]!));
  }
  return img;
}

/** A pixel map as plain data, so it can be sent to a worker thread. */
export type PixelKernel =
  | { kind: 'affine'; m: Mat3; off: readonly [number, number, number] }
  | { kind: 'lut'; table: Uint8Array }
  | { kind: 'vibrance'; k: number }
  | { kind: 'unsharp'; blurred: Uint8Array; amount: number };

export function applyKernel(img: RawImage, k: PixelKernel): RawImage {
  switch (k.kind) {
    case 'affine': return affine(img, k.m, k.off);
    case 'lut': return lut(img, k.table);
    case 'vibrance': return vibrance(img, k.k);
    case 'unsharp': return unsharp(img, k.blurred, k.amount);
  }
}

/** The first channel of each pixel as RGB grey (what sharp's raw output of a greyscale pipeline keeps). */
export function firstChannelAsGrey(data: Uint8Array, channels: number): Buffer {
  const out = Buffer.alloc((data.length / channels) * 3);
  for (let i = 0, o = 0; i < data.length; i += channels, o += 3) out[o] = out[o + 1] = out[o + 2] = data[i]!;
  return out;
}

/** Grey (1 channel) or grey+alpha (2) pixels widened to RGB / RGBA. */
export function widenGrey(data: Uint8Array, grey: 1 | 2): Buffer {
  const out = Buffer.alloc((data.length / grey) * (grey + 2));
  for (let i = 0, o = 0; i < data.length; i += grey, o += grey + 2) {
    out[o] = out[o + 1] = out[o + 2] = data[i]!;
    if (grey === 2) out[o + 3] = data[i + 1]!;
  }
  return out;
}

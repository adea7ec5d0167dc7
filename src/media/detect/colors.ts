/**
 * Main colours of an image by median cut over a small RGB sample (the caller downsizes it with
 * libvips first): split the box of colours with the widest channel range at its median until
 * there are `count` boxes, each answered by its mean colour, most frequent first. Deterministic.
 */
type Rgb = [number, number, number];

export function mainColors(rgb: Uint8Array, count: number): Rgb[] {
  const n = Math.floor(rgb.length / 3);
  if (n === 0 || count < 1) return [];
  let boxes: Uint32Array[] = [Uint32Array.from({ length: n }, (_, i) => i)];
  while (boxes.length < count) {
    let best = -1;
    let bestRange = 0;
    let bestChannel = 0;
    boxes.forEach((box, i) => {
      if (box.length < 2) return;
      for (let c = 0; c < 3; c++) {
        let lo = 255, hi = 0;
        for (const p of box) { const v = rgb[p * 3 + c]!; if (v < lo) lo = v; if (v > hi) hi = v; }
        if (hi - lo > bestRange) { bestRange = hi - lo; best = i; bestChannel = c; }
      }
    });
    if (best < 0) break; // every box is one colour: fewer colours than asked
    const sorted = Array.from(boxes[best]!).sort((a, b) => rgb[a * 3 + bestChannel]! - rgb[b * 3 + bestChannel]!);
    const mid = sorted.length >> 1;
    boxes = [...boxes.slice(0, best), Uint32Array.from(sorted.slice(0, mid)), Uint32Array.from(sorted.slice(mid)), ...boxes.slice(best + 1)];
  }
  return boxes
    .filter((b) => b.length > 0)
    .sort((a, b) => b.length - a.length)
    .map((box) => {
      const sum = [0, 0, 0];
      for (const p of box) for (let c = 0; c < 3; c++) sum[c]! += rgb[p * 3 + c]!;
      return sum.map((s) => Math.round(s / box.length)) as Rgb;
    });
}

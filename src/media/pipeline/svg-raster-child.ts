/**
 * Child process of svg-raster.ts: reads a sanitised SVG on stdin, writes one JSON line of its
 * header facts to stdout, then (mode `raster`) the image rasterized at its own size as a quickly
 * compressed PNG. librsvg parses and draws in single calls that libvips' timeout cannot interrupt
 * (a 200,000-element SVG took 45 s to parse, a 1000 px blur filter minutes to draw), so this runs
 * in a process of its own that the parent kills at the render's deadline.
 */
import sharp from 'sharp';
import { MAX_INPUT_PIXELS } from '../limits.js';

export interface SvgHeader {
  width: number;
  height: number;
  hasAlpha: boolean;
  channels: number;
  density: number | null;
  space: string | null;
}

async function readStdin(): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function main(): Promise<void> {
  sharp.cache(false);
  sharp.concurrency(1);
  const mode = process.argv[2];
  const input = await readStdin();
  const meta = await sharp(input, { limitInputPixels: false }).metadata();
  const header: SvgHeader = {
    width: meta.width ?? 0,
    height: meta.height ?? 0,
    hasAlpha: meta.hasAlpha,
    channels: meta.channels ?? 4,
    density: meta.density ?? null,
    space: meta.space ?? null,
  };
  process.stdout.write(`${JSON.stringify(header)}\n`);
  // The parent refuses sizes over the limit from the header; this is the second fence.
  if (mode !== 'raster' || header.width * header.height > MAX_INPUT_PIXELS || !header.width || !header.height) return;
  const png = await sharp(input, { limitInputPixels: MAX_INPUT_PIXELS }).png({ compressionLevel: 1, adaptiveFiltering: false }).toBuffer();
  await new Promise<void>((resolve, reject) => process.stdout.write(png, (e) => (e ? reject(e) : resolve())));
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(String((e as Error)?.message ?? e).split('\n')[0]!.slice(0, 300));
    process.exit(3);
  },
);

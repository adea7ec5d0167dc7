/**
 * The remove_bg child process: loads the optional background-removal plugin (AGPL, installed by
 * the operator, never imported by the server) once, then serves one request at a time over IPC.
 * The parent kills it past the time or memory bound, and when idle.
 */
import { createRequire } from 'node:module';
import sharp from 'sharp';
import { compose } from './compose.js';
import type { RemoveBgReply, RemoveBgRequest } from './protocol.js';

/** The public service's limit: larger sources are refused rather than processed for minutes. */
const MAX_PIXELS = 25_000_000;

interface Plugin {
  removeBackground(image: Blob, config: Record<string, unknown>): Promise<Blob>;
}

let plugin: Plugin | null = null;

function load(entry: string): Plugin {
  plugin ??= createRequire(import.meta.url)(entry) as Plugin;
  return plugin;
}

async function handle(req: RemoveBgRequest): Promise<RemoveBgReply> {
  const src = sharp(req.input, { limitInputPixels: MAX_PIXELS * 4 }).rotate();
  const meta = await sharp(req.input, { limitInputPixels: MAX_PIXELS * 4 }).metadata();
  if ((meta.width ?? 0) * (meta.height ?? 0) > MAX_PIXELS) return { id: req.id, ok: false, error: 'the image is larger than 25 megapixels' };
  const png = await src.png().toBuffer();
  const cutBlob = await load(req.pluginEntry).removeBackground(new Blob([png], { type: 'image/png' }), {
    publicPath: req.publicPath,
    model: req.model,
    output: { format: 'image/png' },
  });
  const cut = await sharp(Buffer.from(await cutBlob.arrayBuffer())).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  const out = await compose({ data: cut.data, width: cut.info.width, height: cut.info.height }, req.params);
  return { id: req.id, ok: true, png: out.png, width: out.width, height: out.height };
}

process.on('message', (req: RemoveBgRequest) => {
  handle(req).then(
    (reply) => process.send?.(reply),
    (err: unknown) => process.send?.({ id: req.id, ok: false, error: err instanceof Error ? err.message : String(err) } satisfies RemoveBgReply),
  );
});
process.on('disconnect', () => process.exit(0));

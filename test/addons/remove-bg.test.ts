/**
 * remove_bg through the real optional plugin (@imgly/background-removal-node, installed by
 * `stowage plugin install remove_bg --plugins-dir .plugins`, as .ci/run does): a generated image
 * with a clear subject on a plain background becomes a new PNG file with alpha, the subject opaque
 * and the background transparent; crop, crop_margin, scale, position and channels are applied;
 * unsupported params are refused with a 400 naming them; without the plugin the status is `error`.
 * `type_level` names the foreground from what the detectors find on real photos (a kitten from
 * ij-test, the dinner photo of @vladmandic/human's samples).
 */
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT, startServer } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';
import { restClient, uploadBase, type RestCall } from '../helpers/rest.js';
import { catPhoto } from '../media/labelled-photos.js';
import { dinnerPhoto } from '../media/photos.js';

const PLUGINS = path.join(ROOT, '.plugins');
const W = 320;
const H = 240;
/** A red disc (radius 70) centred on a light grey background. */
const SUBJECT = { cx: 160, cy: 120, r: 70 };

const s = useServer({ env: { STOWAGE_PLUGINS_DIR: PLUGINS, STOWAGE_ADDON_TIMEOUT_MS: '600000' } });
let image: Buffer;

beforeAll(async () => {
  // Fail (not skip) without the plugin: CI installs it, and so must anyone running this suite.
  expect(fs.existsSync(path.join(PLUGINS, 'node_modules', '@imgly', 'background-removal-node')), `run: node bin/stowage.js plugin install remove_bg --plugins-dir ${PLUGINS}`).toBe(true);
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}"><rect width="100%" height="100%" fill="#eeeeee"/><circle cx="${SUBJECT.cx}" cy="${SUBJECT.cy}" r="${SUBJECT.r}" fill="#c0392b"/></svg>`;
  image = await sharp(Buffer.from(svg)).jpeg({ quality: 92 }).toBuffer();
});

async function removeBg(params: unknown, call: RestCall = s.call, target?: string): Promise<{ status: string; result?: { file_id: string }; error?: string; target: string }> {
  const uuid = target ?? (await s.uploadFile('ball.jpg', image));
  const r = await call('POST', '/addons/remove_bg/execute/', { body: JSON.stringify({ target: uuid, params }), contentType: 'application/json' });
  expect(r.status, r.text).toBe(200);
  const end = Date.now() + 280_000;
  for (;;) {
    const st = await call('GET', `/addons/remove_bg/execute/status/?request_id=${r.json.request_id}`);
    if (st.json.status !== 'in_progress') return { ...st.json, target: uuid };
    if (Date.now() > end) throw new Error('remove_bg did not finish');
    await new Promise((res) => setTimeout(res, 300));
  }
}

async function resultImage(fileId: string) {
  const info = await s.call('GET', `/files/${fileId}/`);
  expect(info.status).toBe(200);
  expect(info.json.mime_type).toBe('image/png');
  const bytes = Buffer.from(await (await fetch(`${s.cdn}/${fileId}/`)).arrayBuffer());
  // The file's own channels (raw decoding widens a grey PNG to three).
  const { channels } = await sharp(bytes).metadata();
  const { data, info: decoded } = await sharp(bytes).raw().toBuffer({ resolveWithObject: true });
  const alpha = (x: number, y: number) => data[(y * decoded.width + x) * decoded.channels + (decoded.channels - 1)]!;
  return { meta: { width: decoded.width, height: decoded.height, channels }, alpha, info: info.json };
}

/** Pids of the processes whose parent is `pid` (any of its threads). */
function childrenOf(pid: number): number[] {
  return fs.readdirSync(`/proc/${pid}/task`).flatMap((t) => fs.readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number));
}

const parentOf = (pid: number): number => Number(/^PPid:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);

/** Pids of the processes whose command line contains `text`. */
function processesRunning(text: string): number[] {
  return fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d)).filter((d) => {
    try {
      return fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').includes(text);
    } catch {
      return false;
    }
  }).map(Number);
}

describe('remove_bg', () => {
  it('makes a new PNG with alpha: the subject opaque, the background transparent; appdata on the source', async () => {
    const st = await removeBg(undefined);
    expect(st.status, st.error).toBe('done');
    expect(st.result?.file_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(st.result!.file_id).not.toBe(st.target);
    const { meta, alpha, info } = await resultImage(st.result!.file_id);
    expect([meta.width, meta.height, meta.channels]).toEqual([W, H, 4]);
    expect(info.original_filename).toBe('ball.png');
    expect(alpha(SUBJECT.cx, SUBJECT.cy)).toBeGreaterThan(230);
    expect(alpha(SUBJECT.cx + 50, SUBJECT.cy)).toBeGreaterThan(230);
    for (const [x, y] of [[5, 5], [W - 5, 5], [5, H - 5], [W - 5, H - 5], [30, SUBJECT.cy], [SUBJECT.cx, 20]] as const) expect(alpha(x, y)).toBeLessThan(25);
    const source = await s.call('GET', `/files/${st.target}/?include=appdata`);
    expect(source.json.appdata.remove_bg).toMatchObject({ data: { foreground_type: 'auto' }, version: '1.0' });
    // The model's process (idle now, kept for the next request) was started by the launcher helper,
    // the server's only child, not forked from the server (docs/reliability.md).
    const server = s.server.child.pid as number;
    const serverChildren = childrenOf(server);
    expect(serverChildren).toHaveLength(1);
    // This server's model process, whichever of the two it hangs from (another suite's server may
    // run one of its own at the same time).
    const model = processesRunning('remove-bg/child.js').filter((pid) => [server, serverChildren[0]].includes(parentOf(pid)));
    expect(model).toHaveLength(1);
    expect(parentOf(model[0]!)).toBe(serverChildren[0]);
  }, 300_000);

  it('crop with crop_margin, then scale + position + channels=alpha', async () => {
    const cropped = await removeBg({ crop: true, crop_margin: '10px', type: 'product' });
    expect(cropped.status, cropped.error).toBe('done');
    const c = await resultImage(cropped.result!.file_id);
    // The disc's box (141 px) plus 10 px each side, give or take the mask's soft edge.
    expect(Math.abs(c.meta.width - (2 * SUBJECT.r + 21))).toBeLessThanOrEqual(6);
    expect(Math.abs(c.meta.height - (2 * SUBJECT.r + 21))).toBeLessThanOrEqual(6);
    expect(c.alpha(Math.round(c.meta.width / 2), Math.round(c.meta.height / 2))).toBeGreaterThan(230);
    expect(c.alpha(2, 2)).toBeLessThan(25);
    expect((await s.call('GET', `/files/${cropped.target}/?include=appdata`)).json.appdata.remove_bg.data).toEqual({ foreground_type: 'product' });

    const moved = await removeBg({ scale: '50%', position: '0% 0%', channels: 'alpha', semitransparency: false, type_level: '2' });
    expect(moved.status, moved.error).toBe('done');
    // A red disc is none of person, animal, car or transportation.
    expect((await s.call('GET', `/files/${moved.target}/?include=appdata`)).json.appdata.remove_bg.data).toEqual({ foreground_type: 'product' });
    const m = await resultImage(moved.result!.file_id);
    // One channel: the mask. The subject now fits 50% of the canvas (120 px high), in the top-left corner.
    expect([m.meta.width, m.meta.height, m.meta.channels]).toEqual([W, H, 1]);
    expect(m.alpha(60, 60)).toBe(255);
    expect(m.alpha(SUBJECT.cx, SUBJECT.cy + 40)).toBe(0);
    expect(m.alpha(W - 10, H - 10)).toBe(0);
  }, 600_000);

  it('type_level 1 and latest name the foreground the detectors find: an animal, a person', async () => {
    const cat = await removeBg({ type_level: '1' }, s.call, await s.uploadFile('cat.jpg', fs.readFileSync(catPhoto())));
    expect(cat.status, cat.error).toBe('done');
    expect((await s.call('GET', `/files/${cat.target}/?include=appdata`)).json.appdata.remove_bg.data).toEqual({ foreground_type: 'animal' });
    // An explicit type does not hide what was found.
    const dinner = await removeBg({ type_level: 'latest', type: 'product' }, s.call, await s.uploadFile('dinner.jpg', fs.readFileSync(await dinnerPhoto())));
    expect(dinner.status, dinner.error).toBe('done');
    expect((await s.call('GET', `/files/${dinner.target}/?include=appdata`)).json.appdata.remove_bg.data).toEqual({ foreground_type: 'person' });
  }, 600_000);

  it('refuses what it cannot honour with a 400 naming the parameter, and non-images', async () => {
    const uuid = await s.uploadFile('ball.jpg', image);
    const post = (params: unknown, target = uuid) => s.call('POST', '/addons/remove_bg/execute/', { body: JSON.stringify({ target, params }), contentType: 'application/json' });
    for (const [params, field] of [
      [{ type_level: '3' }, 'params.type_level'],
      [{ crop: 'yes' }, 'params.crop'],
      [{ crop_margin: 'lots' }, 'params.crop_margin'],
      [{ scale: '5%' }, 'params.scale'],
      [{ position: 'left' }, 'params.position'],
      [{ roi: '1 2 3' }, 'params.roi'],
      [{ channels: 'rgb' }, 'params.channels'],
      [{ type: 'animal' }, 'params.type'],
      [{ format: 'jpg' }, 'params.format'],
    ] as const) {
      const r = await post(params);
      expect(r.status, JSON.stringify(params)).toBe(400);
      expect(r.json.detail).toContain(field);
    }
    const text = await s.uploadFile('notes.txt', 'not an image');
    const r = await post({}, text);
    expect(r.status).toBe(400);
    expect(r.json.detail).toBe('Not supported for files that are not images.');
  });

  it('answers status error naming the install command when the plugin is missing', async () => {
    // A node of its own: its plugins dir is empty.
    const bare = await startServer({ env: { STOWAGE_PLUGINS_DIR: path.join(s.server.dataDir, 'no-plugins') } });
    try {
      const keys = await bare.createProject();
      const call = restClient(bare.rest, keys);
      const up = await uploadBase(bare.upload, keys.public_key, [{ name: 'ball.jpg', data: image }]);
      const r = await call('POST', '/addons/remove_bg/execute/', { body: JSON.stringify({ target: up.json.file }), contentType: 'application/json' });
      expect(r.status).toBe(200);
      let st: { status: string; error?: string } = { status: 'in_progress' };
      for (let i = 0; i < 200 && st.status === 'in_progress'; i++) {
        await new Promise((res) => setTimeout(res, 200));
        st = (await call('GET', `/addons/remove_bg/execute/status/?request_id=${r.json.request_id}`)).json;
      }
      expect(st.status).toBe('error');
      expect(st.error).toContain('stowage plugin install remove_bg');
    } finally {
      await bare.stop();
    }
  }, 120_000);
});

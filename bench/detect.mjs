// `node bench/detect.mjs` (after a build; also the last part of `npm run bench`): the detectors
// warm, on one core (the process is pinned to core 1 with taskset when it is there): face
// detection, object detection (labels), both as the labels add-on runs them, and the NSFW
// classifier (moderation), each on a 1 Mpx photo; model loading time and RSS after loading all
// models. Targets (#13 item 6, #14 item 4): labels and moderation < 500 ms, faces < 150 ms.
import { execFileSync, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const RUNS = Number(process.env.BENCH_DETECT_RUNS ?? 10);

if (!process.env.BENCH_DETECT_CHILD) {
  let pinned = false;
  try { execFileSync('taskset', ['-V'], { stdio: 'ignore' }); pinned = true; } catch { /* no taskset: unpinned */ }
  const cmd = pinned ? ['taskset', ['-c', '1', process.execPath, fileURLToPath(import.meta.url)]] : [process.execPath, [fileURLToPath(import.meta.url)]];
  const r = spawnSync(cmd[0], cmd[1], { stdio: 'inherit', env: { ...process.env, BENCH_DETECT_CHILD: pinned ? 'pinned' : 'unpinned' } });
  process.exit(r.status ?? 1);
}

const dist = (p) => import(path.join(HERE, '..', 'dist', p));
const { detectIn, classifyNsfw, warmDetectors, closeDetectPool, NSFW_INPUT } = await dist('media/detect/pool.js');
const { rgbOf } = await dist('media/detect/sample.js');

// A 1 Mpx photo: the party picture @vladmandic/human ships (assets/samples.jpg, below its thumbnails).
const require = createRequire(import.meta.url);
const samples = path.join(path.dirname(require.resolve('@vladmandic/human')), '..', 'assets', 'samples.jpg');
const photo = await sharp(samples).extract({ left: 0, top: 195, width: 1280, height: 963 }).resize(1155, 866).jpeg().toBuffer();
const meta = await sharp(photo).metadata();
console.log(`\n== detectors (${process.env.BENCH_DETECT_CHILD}, load average ${os.loadavg()[0].toFixed(1)}, ${RUNS} runs each): photo ${meta.width}x${meta.height} (${((meta.width * meta.height) / 1e6).toFixed(2)} Mpx)`);

const rss0 = process.memoryUsage().rss;
let t = performance.now();
await warmDetectors(120_000);
const loadMs = performance.now() - t;
const rssLoaded = process.memoryUsage().rss;
console.log(`models loaded (BlazeFace, CenterNet, nsfwjs MobileNetV2-mid) in ${loadMs.toFixed(0)} ms; RSS ${(rss0 / 2 ** 20).toFixed(0)} MiB before, ${(rssLoaded / 2 ** 20).toFixed(0)} MiB after`);

async function measure(label, fn, targetMs) {
  await fn(); // first inference compiles kernels: not counted
  const ms = [];
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < RUNS; i++) {
    const s = performance.now();
    await fn();
    ms.push(performance.now() - s);
  }
  const cpu = process.cpuUsage(cpu0);
  // CPU time of the whole process (main thread, libvips, detector thread) per run: on a shared
  // machine wall time also counts other processes' turns on the core.
  const cpuMs = (cpu.user + cpu.system) / 1000 / RUNS;
  ms.sort((a, b) => a - b);
  const p50 = ms[Math.floor(ms.length / 2)];
  console.log(`${label.padEnd(46)} wall p50 ${p50.toFixed(0).padStart(5)} ms  max ${ms.at(-1).toFixed(0).padStart(5)} ms  CPU ${cpuMs.toFixed(0).padStart(5)} ms/run  (target < ${targetMs} ms) ${cpuMs < targetMs ? 'MET' : 'MISSED'} by CPU, ${p50 < targetMs ? 'MET' : 'MISSED'} by wall`);
}

// Each timing includes what a request pays: libvips decoding and downscaling, the copy to the worker.
const sample = () => rgbOf(sharp(photo), meta.width, meta.height);
await measure('faces (detect_faces, crop/face, smart crops)', async () => detectIn('faces', await sample()), 150);
await measure('objects (crop/<class>, zoom_objects)', async () => detectIn('objects', await sample()), 500);
await measure('labels add-on (objects + faces)', async () => { const s = await sample(); await detectIn('objects', s); await detectIn('faces', s); }, 500);
await measure('moderation add-on (nsfwjs)', async () => classifyNsfw(await rgbOf(sharp(photo), meta.width, meta.height, NSFW_INPUT, { w: NSFW_INPUT, h: NSFW_INPUT })), 500);
console.log(`RSS after the runs: ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB`);
await closeDetectPool();

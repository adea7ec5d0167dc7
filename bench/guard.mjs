// `npm run bench:guard`: the regression guard. A short form of five benches (REST file info, a
// small upload, a cached CDN transform, raw CDN delivery, a webhook burst), each reduced to its
// ratio to its floor (the burst: to its 1,000 deliveries/s target), compared with the figures
// recorded in docs/performance.md ("Regression guard"). A case fails only when its ratio is more
// than 30 % below the recorded one in two runs in a row: a case below it is run again at once, so
// one noisy run is not a failure. Exits 1 on a failure. `.ci/run` runs it last, on the machine the
// tests have left idle; run it too before and after a change to a hot path.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.dirname(HERE);
const TOLERANCE = 0.3;
const SHORT = { BENCH_SECONDS: process.env.BENCH_SECONDS ?? '2', BENCH_ROUNDS: process.env.BENCH_ROUNDS ?? '1' };

/** Each case: the bench it runs, its environment, and how its ratio is read from the output. */
const CASES = {
  'rest-info': { script: 'rest.mjs', env: { BENCH_WARMUP_SECONDS: '1' }, ratio: (out) => num(/target: req\/s stowage \/ bare ([\d.]+)/, out) },
  'small-upload': { script: 'base-upload.mjs', env: {}, ratio: (out) => num(/target: req\/s stowage \/ floor ([\d.]+)/, out) },
  'cdn-cached': { script: 'run.mjs', env: { BENCH_CDN_DELIVERY_ONLY: '1' }, ratio: (out) => num(/\[pinned\] cached transform: req\/s stowage alone \/ node:http\s+([\d.]+)/, out), shares: 'cdn' },
  'cdn-raw': { script: 'run.mjs', env: { BENCH_CDN_DELIVERY_ONLY: '1' }, ratio: (out) => num(/\[pinned\] raw 10 KiB: req\/s stowage alone \/ node:http\s+([\d.]+)/, out), shares: 'cdn' },
  'webhook-burst': { script: 'webhooks.mjs', env: { BENCH_IDLE_SAMPLES: '5' }, ratio: (out) => num(/ (\d+) deliveries\/s;/, out) / 1000 },
};

function num(re, out) {
  const m = re.exec(out);
  return m ? Number(m[1]) : NaN;
}

/** The recorded ratios: the rows of the "Regression guard" table in docs/performance.md. */
function recorded() {
  const doc = fs.readFileSync(path.join(ROOT, 'docs', 'performance.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Regression guard'));
  const out = {};
  for (const m of section.matchAll(/^\| `([a-z-]+)` \| ([\d.]+) \|/gm)) out[m[1]] = Number(m[2]);
  return out;
}

/** Runs the benches behind `names` once (two cases sharing a bench share its run): ratio by case. */
function runOnce(names) {
  const outputs = new Map();
  const ratios = {};
  for (const name of names) {
    const c = CASES[name];
    const key = c.shares ?? name;
    if (!outputs.has(key)) {
      const r = spawnSync(process.execPath, [path.join(HERE, c.script)], { env: { ...process.env, ...SHORT, ...c.env }, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
      outputs.set(key, `${r.stdout}\n${r.stderr}`);
    }
    ratios[name] = c.ratio(outputs.get(key));
  }
  return { ratios, outputs };
}

const want = recorded();
const names = Object.keys(CASES).filter((n) => {
  if (want[n] === undefined) console.log(`${n}: no recorded ratio in docs/performance.md, skipped`);
  return want[n] !== undefined;
});
const below = (name, ratio) => !(ratio >= want[name] * (1 - TOLERANCE));
const show = (name, ratio) => `${name.padEnd(14)} ${Number.isFinite(ratio) ? ratio.toFixed(2) : 'no figure'} (recorded ${want[name]}, fails below ${(want[name] * (1 - TOLERANCE)).toFixed(2)})`;

const first = runOnce(names);
const suspects = names.filter((n) => below(n, first.ratios[n]));
for (const n of names) console.log(`${show(n, first.ratios[n])}${suspects.includes(n) ? '  below: running it again' : ''}`);
let failed = [];
if (suspects.length) {
  const second = runOnce(suspects);
  failed = suspects.filter((n) => below(n, second.ratios[n]));
  for (const n of suspects) console.log(`again: ${show(n, second.ratios[n])}${failed.includes(n) ? '  FAILED twice' : '  passes'}`);
  // A failing bench's own table says which side moved (Stowage or its floor) and whether either erred.
  for (const n of failed) console.log(`--- ${CASES[n].script} printed:\n${(second.outputs.get(CASES[n].shares ?? n) ?? '').slice(-3000)}`);
}
console.log(failed.length ? `bench:guard: ${failed.join(', ')} more than ${TOLERANCE * 100} % below the recorded ratio twice in a row` : 'bench:guard: no regression');
process.exit(failed.length ? 1 : 0);

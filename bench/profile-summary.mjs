// `node bench/profile-summary.mjs <file.cpuprofile> [top]`: the functions with the most self time
// and the most inclusive time (a function counted once per sample however deep it recurses), as
// a share of the profile's samples. For profiles taken with BENCH_NODE_ARGS="--cpu-prof …".
import fs from 'node:fs';

const [file, topArg] = process.argv.slice(2);
const TOP = Number(topArg ?? 30);
const prof = JSON.parse(fs.readFileSync(file, 'utf8'));
const byId = new Map(prof.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const label = (n) => {
  const cf = n.callFrame;
  const url = cf.url.replace(/^.*\/(node_modules|dist)\//, '$1/').replace(/^file:\/\//, '');
  return `${cf.functionName || '(anonymous)'} ${url}:${cf.lineNumber + 1}`;
};
const self = new Map();
const incl = new Map();
let total = 0;
for (const id of prof.samples) {
  total++;
  const n = byId.get(id);
  const l = label(n);
  self.set(l, (self.get(l) ?? 0) + 1);
  const seen = new Set();
  for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
    const k = label(byId.get(cur));
    if (!seen.has(k)) { seen.add(k); incl.set(k, (incl.get(k) ?? 0) + 1); }
  }
}
const show = (title, m) => {
  console.log(`\n== ${title} (${total} samples)`);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, TOP)) console.log(`${((100 * v) / total).toFixed(1).padStart(5)}%  ${k}`);
};
show('self', self);
show('inclusive', incl);

// Smoke of a running Stowage stack (deploy/test-stack.sh): what an operator checks after a deploy.
//   node deploy/smoke.mjs <keys.json> <surfaces.json>
// keys.json: {"public_key","secret_key"} of a project; surfaces.json: {"a": {rest, upload, cdn},
// "b": {...}, "proxy": {...}}: two nodes and the front proxy. Uploads on node a, reads and
// transforms on node b, converts a document, loads the dashboard's pages and assets, and does
// the same through the proxy. Prints one line per check; exits 1 at the first failure.
// SMOKE_ONLY (comma-separated: cross, proxy, convert, dashboard, read) runs a part;
// SMOKE_UUIDS_OUT keeps the uuids the cross part uploaded, SMOKE_UUIDS_IN names those `read` checks.
import crypto from 'node:crypto';
import fs from 'node:fs';

const keys = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const nodes = JSON.parse(fs.readFileSync(process.argv[3], 'utf8'));
const only = (process.env.SMOKE_ONLY || 'all').split(',');

function check(cond, what, detail = '') {
  if (!cond) {
    console.error(`FAIL ${what}${detail ? `: ${detail}` : ''}`);
    process.exit(1);
  }
  console.log(`ok   ${what}`);
}

/** A REST call signed the way the official SDKs sign (the Uploadcare scheme: HMAC-SHA1 of the request). */
async function rest(base, method, path, body) {
  const payload = body ? JSON.stringify(body) : '';
  const type = 'application/json';
  const date = new Date().toUTCString();
  const md5 = crypto.createHash('md5').update(payload).digest('hex');
  const signature = crypto.createHmac('sha1', keys.secret_key).update([method, md5, type, date, path].join('\n')).digest('hex');
  const res = await fetch(base + path, {
    method,
    headers: { accept: 'application/vnd.uploadcare-v0.7+json', 'content-type': type, date, authorization: `Uploadcare ${keys.public_key}:${signature}` },
    body: method === 'GET' ? undefined : payload,
  });
  const text = await res.text();
  let json = null;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.status, text, json };
}

async function upload(base, name, bytes, type) {
  const form = new FormData();
  form.set('UPLOADCARE_PUB_KEY', keys.public_key);
  form.set('UPLOADCARE_STORE', '1');
  form.set('file', new Blob([bytes], { type }), name);
  const res = await fetch(`${base}/base/`, { method: 'POST', body: form });
  const json = await res.json().catch(() => ({}));
  check(res.status === 200 && typeof json.file === 'string', `upload ${name} on ${base}`, `${res.status}`);
  return json.file;
}

/** An RGB PNG of width x height with a gradient, encoded here (the smoke needs no image library). */
async function png(width, height) {
  const zlib = await import('node:zlib');
  const raw = Buffer.alloc((width * 3 + 1) * height);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) raw.set([x * 4, y * 5, 128], y * (width * 3 + 1) + 1 + x * 3);
  const chunk = (type, data) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32(body) >>> 0);
    return Buffer.concat([len, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', zlib.deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}

async function waitFor(what, probe, ms = 180_000) {
  const end = Date.now() + ms;
  let last;
  while (Date.now() < end) {
    last = await probe();
    if (last.done) return last.value;
    await new Promise((r) => setTimeout(r, 1000));
  }
  check(false, what, `not done in ${ms / 1000} s: ${JSON.stringify(last?.value)}`);
}

async function crossNode(a, b, label) {
  const image = await png(64, 48);
  const uuid = await upload(a.upload, `smoke-${label}.png`, image, 'image/png');
  const info = await rest(b.rest, 'GET', `/files/${uuid}/`);
  check(info.status === 200 && info.json?.size === image.length, `${label}: file info of an upload of the other node`, `${info.status} ${info.text.slice(0, 200)}`);
  const original = await fetch(`${b.cdn}/${uuid}/`);
  const bytes = Buffer.from(await original.arrayBuffer());
  check(original.status === 200 && bytes.equals(image), `${label}: CDN original from the other node, same bytes`);
  const resized = await fetch(`${b.cdn}/${uuid}/-/resize/32x/-/format/png/`);
  check(resized.status === 200 && resized.headers.get('x-image-width') === '32' && resized.headers.get('x-image-height') === '24', `${label}: CDN transform on the other node (32x24)`, `${resized.status} ${resized.headers.get('x-image-width')}x${resized.headers.get('x-image-height')}`);
  return uuid;
}

async function conversion(a, b) {
  const rtf = '{\\rtf1\\ansi\\deff0 {\\fonttbl {\\f0 Liberation Serif;}}\\f0\\fs24 Stowage smoke: a document converted in the container.\\par}';
  const uuid = await upload(a.upload, 'smoke.rtf', Buffer.from(rtf), 'application/rtf');
  const started = await rest(b.rest, 'POST', '/convert/document/', { paths: [`${uuid}/document/-/format/pdf/`], store: '1' });
  const token = started.json?.result?.[0]?.token;
  check(started.status === 200 && token !== undefined, 'document conversion rtf -> pdf accepted', started.text.slice(0, 300));
  const result = await waitFor('document conversion finished', async () => {
    const s = await rest(a.rest, 'GET', `/convert/document/status/${token}/`);
    return { done: s.json?.status === 'finished' || s.json?.status === 'failed', value: s.json };
  });
  check(result.status === 'finished', 'document conversion finished (LibreOffice in the image)', JSON.stringify(result));
  const pdf = Buffer.from(await (await fetch(`${b.cdn}/${result.result.uuid}/`)).arrayBuffer());
  check(pdf.subarray(0, 5).toString() === '%PDF-', `converted PDF served (${pdf.length} bytes)`);
}

/** The dashboard's page, and every asset it and its modules name (imports, the widget's files). */
async function dashboard(base) {
  const page = await fetch(`${base}/dashboard/`);
  const html = await page.text();
  check(page.status === 200 && /<html/i.test(html), 'dashboard page');
  const queue = [...html.matchAll(/(?:src|href)="([^"#]+)"/g)].map((m) => new URL(m[1], `${base}/dashboard/`).href);
  const seen = new Set();
  while (queue.length > 0) {
    const url = queue.shift();
    if (seen.has(url) || !url.startsWith(base)) continue;
    seen.add(url);
    const res = await fetch(url);
    const body = await res.text();
    check(res.status === 200 && body.length > 0, `dashboard asset ${new URL(url).pathname}`, String(res.status));
    if (url.endsWith('.js')) {
      for (const m of body.matchAll(/from '(\.[^']+)'|(?:src|href): '(\/dashboard\/[^']+)'/g)) queue.push(new URL(m[1] ?? m[2], url).href);
    }
  }
  check(seen.size >= 5, `dashboard: ${seen.size} assets loaded`);
}

/** Files uploaded by an earlier run (SMOKE_UUIDS_IN) are still there, read through node b. */
async function readEarlier(b, uuids) {
  for (const uuid of uuids) {
    const info = await rest(b.rest, 'GET', `/files/${uuid}/`);
    const original = await fetch(`${b.cdn}/${uuid}/-/resize/16x/`);
    await original.arrayBuffer();
    check(info.status === 200 && original.status === 200, `earlier upload ${uuid} read and transformed`, `${info.status} ${original.status}`);
  }
}

const id = crypto.randomBytes(3).toString('hex');
const uploaded = [];
if (only.includes('read')) await readEarlier(nodes.b, fs.readFileSync(process.env.SMOKE_UUIDS_IN, 'utf8').split(/\s+/).filter(Boolean));
if (only.includes('all') || only.includes('cross')) {
  uploaded.push(await crossNode(nodes.a, nodes.b, `a->b ${id}`));
  uploaded.push(await crossNode(nodes.b, nodes.a, `b->a ${id}`));
}
if (process.env.SMOKE_UUIDS_OUT) fs.writeFileSync(process.env.SMOKE_UUIDS_OUT, uploaded.join('\n') + '\n');
if (nodes.proxy && (only.includes('all') || only.includes('proxy'))) await crossNode(nodes.proxy, nodes.proxy, `proxy ${id}`);
if (only.includes('all') || only.includes('convert')) await conversion(nodes.a, nodes.b);
if (only.includes('all') || only.includes('dashboard')) await dashboard((nodes.proxy ?? nodes.a).rest);
console.log('smoke passed');

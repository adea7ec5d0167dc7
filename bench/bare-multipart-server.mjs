// The floor of a browser's multipart upload (bench/uploads.mjs, case `browser-floor`): a bare
// node:http server speaking just enough of the Upload API for the official client's `uploadFile`
// to run unchanged. CORS as any cross-origin page needs it (each part URL is distinct, so every
// part PUT has its own preflight, as with Stowage); `/multipart/start/` hands out one signed-looking
// URL per part; each part PUT is streamed at its offset into one data file and fsynced before the
// 200; `/multipart/complete/` fsyncs the file and answers a ready file. No authentication, no
// metadata store, no digests: what a browser can get out of this machine.
// `node bench/bare-multipart-server.mjs <dir> <port> <partBytes>`; prints "listening <port>".
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';

const [dir, port, partArg] = process.argv.slice(2);
const PART = Number(partArg);
fs.mkdirSync(dir, { recursive: true });
const uploads = new Map();

function cors(req, res) {
  res.setHeader('access-control-allow-origin', '*');
  res.setHeader('access-control-allow-credentials', 'true');
  if (req.method !== 'OPTIONS') return false;
  res.setHeader('access-control-allow-methods', 'GET, POST, PUT, HEAD, OPTIONS');
  res.setHeader('access-control-allow-headers', req.headers['access-control-request-headers'] ?? 'Content-Type');
  res.setHeader('access-control-max-age', '1');
  res.end();
  return true;
}

/** The request's form fields: the client sends FormData (multipart); only `size` is needed here. */
function formSize(body) {
  return Number(/name="size"\r\n\r\n(\d+)\r\n/.exec(body)?.[1] ?? /(?:^|&)size=(\d+)/.exec(body)?.[1]);
}

function readAll(req, done) {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => done(Buffer.concat(chunks).toString('latin1')));
}

function json(res, value) {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify(value));
}

function start(req, res) {
  readAll(req, (body) => {
    const size = formSize(body);
    const uuid = crypto.randomUUID();
    const file = path.join(dir, uuid);
    fs.closeSync(fs.openSync(file, 'w'));
    fs.truncateSync(file, size);
    uploads.set(uuid, { file, size });
    const base = `http://${req.headers.host}`;
    const parts = Array.from({ length: Math.ceil(size / PART) }, (_, i) => `${base}/multipart/upload/${uuid}/${i + 1}/?expires=9999999999&sig=${crypto.randomBytes(32).toString('hex')}`);
    json(res, { uuid, parts });
  });
}

function part(req, res, uuid, n) {
  const up = uploads.get(uuid);
  if (!up) return res.writeHead(404).end();
  const out = fs.createWriteStream(up.file, { flags: 'r+', start: (n - 1) * PART, flush: true });
  req.pipe(out);
  out.on('close', () => res.setHeader('etag', `"${crypto.randomBytes(16).toString('hex')}"`).end());
}

function complete(req, res) {
  readAll(req, (body) => {
    const uuid = /name="uuid"\r\n\r\n([0-9a-f-]+)\r\n/.exec(body)?.[1] ?? /(?:^|&)uuid=([0-9a-f-]+)/.exec(body)?.[1];
    const up = uploads.get(uuid);
    if (!up) return res.writeHead(404).end();
    const fd = fs.openSync(up.file, 'r+');
    fs.fsync(fd, () => {
      fs.closeSync(fd);
      uploads.delete(uuid);
      res.on('finish', () => fs.rm(up.file, { force: true }, () => undefined));
      json(res, { uuid, file_id: uuid, size: up.size, total: up.size, done: up.size, filename: 'big.bin', original_filename: 'big.bin', is_ready: true, is_stored: true, is_image: false, mime_type: 'application/octet-stream', image_info: null, video_info: null, content_info: null, metadata: {}, s3_bucket: null });
    });
  });
}

http
  .createServer((req, res) => {
    if (cors(req, res)) return;
    const url = new URL(req.url, 'http://x');
    const m = /^\/multipart\/upload\/([0-9a-f-]{36})\/(\d+)\/$/.exec(url.pathname);
    if (req.method === 'PUT' && m) return part(req, res, m[1], Number(m[2]));
    if (req.method === 'POST' && url.pathname === '/multipart/start/') return start(req, res);
    if (req.method === 'POST' && url.pathname === '/multipart/complete/') return complete(req, res);
    req.resume();
    res.writeHead(404).end();
  })
  .listen(Number(port), '127.0.0.1', () => console.log(`listening ${port}`));

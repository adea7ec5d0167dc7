// The ceiling: sharp in-process on the same image and settings, `inflight` pipelines at a time,
// widths 300..399 as in the HTTP runs, reading the JPEG from its file (`file`) or from a buffer
// read once (`memory`, what a server holding originals in memory can reach). Prints images/s and
// CPU ms per image as JSON.
import fs from 'node:fs';
import sharp from 'sharp';

const [path, format, seconds, inflight, source = 'file'] = process.argv.slice(2);
const file = source === 'memory' ? fs.readFileSync(path) : path;
sharp.concurrency(1);
const encode = (img) => (format === 'webp' ? img.webp({ quality: 80, effort: 4 }) : img.jpeg({ quality: 80, chromaSubsampling: '4:2:0' }));
let n = 0;
let bytes = 0;
const one = (i) => encode(sharp(file, { failOn: 'error', autoOrient: true }).resize(300 + (i % 100))).toBuffer();
for (let i = 0; i < 20; i++) await one(i); // warm-up
const t0 = process.hrtime.bigint();
const c0 = process.cpuUsage();
const end = Date.now() + Number(seconds) * 1000;
await Promise.all(Array.from({ length: Number(inflight) }, async () => {
  while (Date.now() < end) {
    const out = await one(n++); // not `bytes += await …`: that reads `bytes` before awaiting and loses updates
    bytes += out.length;
  }
}));
const c1 = process.cpuUsage(c0);
const secs = Number(process.hrtime.bigint() - t0) / 1e9;
console.log(JSON.stringify({ rps: n / secs, cpuMsPerReq: (c1.user + c1.system) / 1000 / n, requests: n, bytesPerReq: bytes / n }));

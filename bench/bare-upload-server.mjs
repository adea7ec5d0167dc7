// The small-upload floor (issue #19 item 2): a bare Fastify route taking a multipart POST with the
// same durability Stowage gives before it answers: the file part streamed to a temporary file,
// fsynced and renamed into place, and one row committed to SQLite (WAL, synchronous=FULL).
// No authentication, no type detection, no events: only the durable write.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import Database from 'better-sqlite3';
import Fastify from 'fastify';
import multipart from '@fastify/multipart';

const [dir, port] = process.argv.slice(2);
fs.mkdirSync(path.join(dir, 'tmp'), { recursive: true });
fs.mkdirSync(path.join(dir, 'files'), { recursive: true });
const db = new Database(path.join(dir, 'floor.sqlite'));
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.exec('create table if not exists files (uuid text primary key, size integer, created_us integer)');
const insert = db.prepare('insert into files (uuid, size, created_us) values (?, ?, ?)');

const app = Fastify({ logger: false });
await app.register(multipart, { limits: { fileSize: 100 * 1024 * 1024 } });
app.post('/base/', async (req, reply) => {
  let uuid = null;
  for await (const part of req.parts()) {
    if (part.type !== 'file') continue;
    uuid = crypto.randomUUID();
    const tmp = path.join(dir, 'tmp', uuid);
    await pipeline(part.file, fs.createWriteStream(tmp));
    const fh = await fs.promises.open(tmp, 'r+');
    await fh.sync();
    const { size } = await fh.stat();
    await fh.close();
    await fs.promises.rename(tmp, path.join(dir, 'files', uuid));
    insert.run(uuid, size, Date.now() * 1000);
  }
  return reply.code(200).header('content-type', 'application/json').send(JSON.stringify({ file: uuid }));
});
await app.listen({ host: '127.0.0.1', port: Number(port) });
console.log('listening');

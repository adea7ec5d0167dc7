/**
 * Identical bytes stored once (docs/storage.md): uploads of the same bytes into one project share
 * one blob; a file's deletion drops the bytes only with their last file; other projects never share;
 * concurrent uploads and a last deletion racing new uploads never lose bytes; the leftovers sweep
 * keeps a shared blob whose first uploader is gone and removes a crash's duplicate copy.
 * Runs against the data dir (fs) or the bucket (STOWAGE_TEST_S3=1), on SQLite or PostgreSQL.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { blobExists, testS3, type TestServer } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';
import { uploadBase, type RestCall } from '../helpers/rest.js';
import { fileRows } from '../reliability/audit.js';
import { tusUpload } from '../tus/helpers.js';

const MIN_AGE_MS = 6000;
const srv = useServer({
  env: {
    STOWAGE_LEFTOVERS_MIN_AGE_MS: String(MIN_AGE_MS),
    STOWAGE_LEFTOVERS_SWEEP_MS: '500',
    STOWAGE_UPLOAD_REQUEST_TIMEOUT_MS: '5000',
    STOWAGE_FROM_URL_TIMEOUT_MS: '5000',
  },
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const sha256 = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');

/** A PNG no other test of this file uses (its colour and noise come from `seed`). */
async function pngOf(seed: number): Promise<Buffer> {
  const noise = crypto.createHash('sha256').update(`png-${seed}`).digest();
  const raw = Buffer.alloc(32 * 24 * 3, 0);
  for (let i = 0; i < raw.length; i++) raw[i] = noise[i % noise.length]! ^ (i & 0xff);
  return sharp(raw, { raw: { width: 32, height: 24, channels: 3 } }).png().toBuffer();
}

/** Every key under `files/` in the server's store (data dir or bucket). */
async function fileKeys(server: TestServer): Promise<Set<string>> {
  if (!server.bucket) {
    const root = path.join(server.dataDir, 'blobs');
    const dir = path.join(root, 'files');
    if (!fs.existsSync(dir)) return new Set();
    return new Set(
      (fs.readdirSync(dir, { recursive: true, withFileTypes: true }) as fs.Dirent[])
        .filter((e) => e.isFile())
        .map((e) => path.relative(root, path.join(e.parentPath, e.name)).split(path.sep).join('/')),
    );
  }
  const { ListObjectsV2Command } = await import('@aws-sdk/client-s3');
  const keys = new Set<string>();
  let token: string | undefined;
  do {
    const out = await (await testS3()).client.send(new ListObjectsV2Command({ Bucket: server.bucket, Prefix: 'files/', ContinuationToken: token }));
    for (const o of out.Contents ?? []) keys.add(o.Key as string);
    token = out.NextContinuationToken;
  } while (token);
  return keys;
}

async function readBlob(server: TestServer, key: string): Promise<Buffer> {
  if (!server.bucket) return fs.readFileSync(path.join(server.dataDir, 'blobs', key));
  const { GetObjectCommand } = await import('@aws-sdk/client-s3');
  const out = await (await testS3()).client.send(new GetObjectCommand({ Bucket: server.bucket, Key: key }));
  return Buffer.from(await out.Body!.transformToByteArray());
}

async function writeBlob(server: TestServer, key: string, bytes: Buffer): Promise<void> {
  if (!server.bucket) {
    const file = path.join(server.dataDir, 'blobs', key);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    return fs.writeFileSync(file, bytes);
  }
  const { PutObjectCommand } = await import('@aws-sdk/client-s3');
  await (await testS3()).client.send(new PutObjectCommand({ Bucket: server.bucket, Key: key, Body: bytes }));
}

/** The blob key each file row names (null once its bytes were reclaimed), read from the store. */
async function blobKeys(uuids: string[]): Promise<Map<string, string | null>> {
  const rows = await fileRows(srv.server);
  return new Map(rows.filter((r) => uuids.includes(r.uuid)).map((r) => [r.uuid, r.blob_key]));
}

const cdnBytes = async (uuid: string) => {
  const r = await fetch(`${srv.cdn}/${uuid}/`);
  expect(r.status, uuid).toBe(200);
  return Buffer.from(await r.arrayBuffer());
};

async function until(what: string, check: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** Deletes the files and waits until their removal jobs let go of the bytes. */
async function deleteAndReclaim(call: RestCall, uuids: string[]): Promise<void> {
  for (const uuid of uuids) expect((await call('DELETE', `/files/${uuid}/storage/`)).status).toBe(200);
  await until('the removal jobs', async () => [...(await blobKeys(uuids)).values()].every((k) => k === null));
}

async function uploadTo(publicKey: string, name: string, data: Buffer): Promise<string> {
  const r = await uploadBase(srv.upload, publicKey, [{ name, data, type: 'image/png' }], { UPLOADCARE_STORE: '1' });
  expect(r.status, r.text).toBe(200);
  return r.json.file as string;
}

describe('identical bytes stored once', () => {
  it('six uploads of one PNG make one blob; deleting five keeps it, deleting the sixth removes it', async () => {
    const png = await pngOf(1);
    const before = await fileKeys(srv.server);
    const uuids: string[] = [];
    for (let i = 0; i < 6; i++) uuids.push(await srv.uploadFile(`copy-${i}.png`, png, { type: 'image/png' }));
    const added = [...(await fileKeys(srv.server))].filter((k) => !before.has(k));
    expect(added).toHaveLength(1);
    const shared = added[0]!;
    expect(new Set((await blobKeys(uuids)).values())).toEqual(new Set([shared]));
    expect(sha256(await readBlob(srv.server, shared))).toBe(sha256(png));
    for (const uuid of uuids) expect((await cdnBytes(uuid)).equals(png)).toBe(true);
    // Every file keeps its own identity on the API.
    const info = await srv.call('GET', `/files/${uuids[5]}/`);
    expect(info.json).toMatchObject({ uuid: uuids[5], original_filename: 'copy-5.png', size: png.length, is_image: true });

    // The first uploader's file goes too: its key keeps holding the others' bytes.
    await deleteAndReclaim(srv.call, uuids.slice(0, 5));
    expect(await blobExists(srv.server, shared)).toBe(true);
    expect((await cdnBytes(uuids[5]!)).equals(png)).toBe(true);
    // The bytes still exist, but a deleted file is not served from them.
    expect((await fetch(`${srv.cdn}/${uuids[0]}/`)).status).toBe(404);

    await deleteAndReclaim(srv.call, uuids.slice(5));
    // The job commits the row's release before it deletes the bytes: wait for the delete too.
    await until('the shared bytes deleted', async () => !(await blobExists(srv.server, shared)));
    expect((await fetch(`${srv.cdn}/${uuids[5]}/`)).status).toBe(404);
  });

  it('never shares across projects; different bytes never share', async () => {
    const png = await pngOf(2);
    const mine = await srv.uploadFile('a.png', png, { type: 'image/png' });
    const other = await srv.newProject();
    const theirs = await uploadTo(other.keys.public_key, 'a.png', png);
    const different = await srv.uploadFile('b.png', await pngOf(3), { type: 'image/png' });
    const keys = await blobKeys([mine, theirs, different]);
    expect(new Set(keys.values()).size).toBe(3);
    // Deleting one project's copy leaves the other's bytes alone.
    await deleteAndReclaim(srv.call, [mine]);
    expect((await cdnBytes(theirs)).equals(png)).toBe(true);
    expect(await blobExists(srv.server, keys.get(theirs)!)).toBe(true);
  });

  it('concurrent uploads of the same new bytes all succeed and share one blob, leaving no duplicate', async () => {
    const png = await pngOf(4);
    const before = await fileKeys(srv.server);
    const uuids = await Promise.all(Array.from({ length: 8 }, (_, i) => srv.uploadFile(`c${i}.png`, png, { type: 'image/png' })));
    const added = [...(await fileKeys(srv.server))].filter((k) => !before.has(k));
    expect(added).toHaveLength(1);
    expect(new Set((await blobKeys(uuids)).values())).toEqual(new Set(added));
    for (const uuid of uuids) expect((await cdnBytes(uuid)).equals(png)).toBe(true);
  });

  it('a burst of uploads, some with equal bytes (rows committed in shared transactions): every answer has its row and its bytes', async () => {
    const pngs = await Promise.all([pngOf(40), pngOf(41), pngOf(42)]);
    const sends = Array.from({ length: 30 }, (_, i) => ({ bytes: i % 2 === 0 ? pngs[i % 3]! : Buffer.concat([pngs[0]!, Buffer.from(`tail-${i}`)]), name: `burst-${i}.png` }));
    const before = await fileKeys(srv.server);
    const uuids = await Promise.all(sends.map((f) => srv.uploadFile(f.name, f.bytes, { type: 'image/png' })));
    expect(new Set(uuids).size).toBe(30);
    for (const [i, uuid] of uuids.entries()) {
      const info = await srv.call('GET', `/files/${uuid}/`);
      expect(info.status, uuid).toBe(200);
      expect((info.json as { size: number }).size).toBe(sends[i]!.bytes.length);
      expect((await cdnBytes(uuid)).equals(sends[i]!.bytes), uuid).toBe(true);
    }
    // Three distinct images among the even uploads and 15 distinct odd ones: 18 blobs, no duplicate.
    const added = [...(await fileKeys(srv.server))].filter((k) => !before.has(k));
    expect(added).toHaveLength(18);
  });

  it('the last file of some bytes deleted while new uploads of the same bytes arrive: no upload loses its bytes', async () => {
    for (let round = 0; round < 6; round++) {
      const png = await pngOf(100 + round);
      const first = await srv.uploadFile('first.png', png, { type: 'image/png' });
      // The delete (and its removal job, which the worker starts at once) races the uploads.
      const [deleted, ...later] = await Promise.all([
        srv.call('DELETE', `/files/${first}/storage/`),
        ...Array.from({ length: 3 }, (_, i) => srv.uploadFile(`later-${i}.png`, png, { type: 'image/png' })),
      ]);
      expect((deleted as { status: number }).status).toBe(200);
      const uploaded = later as string[];
      await until('the removal job', async () => (await blobKeys([first])).get(first) === null);
      const keys = await blobKeys(uploaded);
      for (const uuid of uploaded) {
        const key = keys.get(uuid);
        expect(key, uuid).toBeTruthy();
        expect(sha256(await readBlob(srv.server, key!)), `${uuid} round ${round}`).toBe(sha256(png));
        expect((await cdnBytes(uuid)).equals(png)).toBe(true);
      }
    }
  });

  it('the leftovers sweep keeps a shared blob whose first uploader is gone, and removes a crash\'s duplicate copy', async () => {
    const png = await pngOf(5);
    const [a, b] = [await srv.uploadFile('a.png', png, { type: 'image/png' }), await srv.uploadFile('b.png', png, { type: 'image/png' })];
    const shared = (await blobKeys([a])).get(a)!;
    expect(shared).toContain(a);
    await deleteAndReclaim(srv.call, [a]);
    // What a crash between committing b's row and dropping its staged copy would leave behind.
    const duplicate = `files/${b.slice(0, 2)}/${crypto.randomUUID()}`;
    await writeBlob(srv.server, duplicate, png);
    // The duplicate is younger than the shared blob, so the sweep that removes it judged both.
    await until('the sweep', async () => !(await blobExists(srv.server, duplicate)), MIN_AGE_MS + 30_000);
    expect(await blobExists(srv.server, shared)).toBe(true);
    expect((await cdnBytes(b)).equals(png)).toBe(true);
  });

  it('a local copy in the same project shares the source\'s blob', async () => {
    const png = await pngOf(6);
    const src = await srv.uploadFile('src.png', png, { type: 'image/png' });
    const r = await srv.call('POST', '/files/local_copy/', { body: JSON.stringify({ source: src, store: true }) });
    expect(r.status, r.text).toBe(201);
    const keys = await blobKeys([src, r.json.result.uuid]);
    expect(keys.get(r.json.result.uuid)).toBe(keys.get(src));
    expect((await cdnBytes(r.json.result.uuid)).equals(png)).toBe(true);
  });

  it('a tus upload shares the blob of a /base/ upload of the same bytes', async () => {
    const png = await pngOf(7);
    const base = await srv.uploadFile('base.png', png, { type: 'image/png' });
    const r = await tusUpload(png, { endpoint: `${srv.upload}/tus/`, metadata: { UPLOADCARE_PUB_KEY: srv.keys.public_key, filename: 'tus.png', UPLOADCARE_STORE: '1' } });
    expect(r.fileUuid).toBeTruthy();
    const keys = await blobKeys([base, r.fileUuid!]);
    expect(keys.get(r.fileUuid!)).toBe(keys.get(base));
    expect((await cdnBytes(r.fileUuid!)).equals(png)).toBe(true);
  });
});

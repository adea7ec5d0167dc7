/**
 * Storing a file removed a moment before (docs/files.md, "Removing and restoring"), as the official
 * REST client's suite does: within STOWAGE_RESTORE_WINDOW_MS of a removal through the API, PUT
 * /files/{uuid}/storage/ and the batch store bring the file back with its bytes and a file.stored
 * event; the CDN answers 404 while it is removed. After the window its bytes are reclaimed and the
 * store is a 400. An unstored file's expiry is final at once. Runs on disk and on S3.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UploadcareAuthSchema, deleteFile, deleteFiles, storeFile, storeFiles } from '@uploadcare/rest-client';
import { blobExists } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';
import { uploadBase } from '../helpers/rest.js';
import { startReceiver, type Receiver } from '../webhooks/receiver.js';
import { until } from '../uploads/helpers.js';

const WINDOW_MS = 6000;
const srv = useServer({ env: { STOWAGE_RESTORE_WINDOW_MS: String(WINDOW_MS), STOWAGE_UNSTORED_TTL_MS: '2000', STOWAGE_EXPIRY_SWEEP_MS: '500', STOWAGE_OUTBOUND_ALLOW: '127.0.0.0/8' } });
let hooks: Receiver;
beforeAll(async () => {
  hooks = await startReceiver();
  for (const event of ['file.stored', 'file.deleted']) {
    const r = await srv.call('POST', '/webhooks/', { body: new URLSearchParams({ target_url: hooks.url, event }).toString(), contentType: 'application/x-www-form-urlencoded' });
    expect(r.status, r.text).toBe(201);
  }
});
afterAll(async () => {
  await hooks?.close();
});

const upload = async (name: string, data: string, store = '1'): Promise<string> => {
  const r = await uploadBase(srv.upload, srv.keys.public_key, [{ name, data }], { UPLOADCARE_STORE: store });
  expect(r.status, r.text).toBe(200);
  return r.json.file as string;
};
const cdn = async (uuid: string): Promise<{ status: number; text: string }> => {
  const r = await fetch(`${srv.cdn}/${uuid}/`);
  return { status: r.status, text: await r.text() };
};
const ownBlob = (uuid: string) => `files/${uuid.slice(0, 2)}/${uuid}`;
const events = (uuid: string) => hooks.received.filter((r) => r.json?.data?.uuid === uuid).map((r) => r.json.hook.event as string);

describe('restoring a removed file', () => {
  it('stores it again within the window, by PUT and by the batch; after the window the store is a 400', { timeout: 60_000 }, async () => {
    const one = await upload('one.txt', 'restored by PUT');
    const twin = await upload('twin.txt', 'restored by PUT'); // the same bytes: one shared blob
    const batched = await upload('two.txt', 'restored by the batch');
    const gone = await upload('gone.txt', 'removed for good');
    const expiring = await upload('temp.txt', 'never stored', '0');

    for (const uuid of [one, twin, batched]) expect((await srv.call('DELETE', `/files/${uuid}/storage/`)).status).toBe(200);
    expect((await cdn(one)).status).toBe(404);
    expect((await srv.call('GET', `/files/${one}/`)).json.datetime_removed).toMatch(/Z$/);

    const put = await srv.call('PUT', `/files/${one}/storage/`);
    expect(put.status, put.text).toBe(200);
    expect(put.json).toMatchObject({ uuid: one, datetime_removed: null, datetime_stored: expect.stringMatching(/Z$/) });
    expect(await cdn(one)).toEqual({ status: 200, text: 'restored by PUT' });
    expect((await srv.call('GET', `/files/${one}/`)).json).toMatchObject({ datetime_removed: null, is_ready: true });

    const batch = await srv.call('PUT', '/files/storage/', { body: JSON.stringify([batched]) });
    expect(batch.json).toMatchObject({ status: 'ok', problems: {} });
    expect(batch.json.result.map((f: { uuid: string; datetime_removed: string | null }) => [f.uuid, f.datetime_removed])).toEqual([[batched, null]]);
    expect(await cdn(batched)).toEqual({ status: 200, text: 'restored by the batch' });
    // The twin stays removed (the CDN says so), its restored sibling serves the shared bytes.
    expect((await cdn(twin)).status).toBe(404);

    // Removed after the others: once its bytes are gone, every earlier removal's job has run too.
    expect((await srv.call('DELETE', `/files/${gone}/storage/`)).status).toBe(200);
    await until(async () => ((await blobExists(srv.server, ownBlob(gone))) ? undefined : true), 30_000);

    const late = await srv.call('PUT', `/files/${gone}/storage/`);
    expect(late.status).toBe(400);
    expect(late.json.detail).toBe('File is removed and can not be stored.');
    const lateBatch = await srv.call('PUT', '/files/storage/', { body: JSON.stringify([gone, twin]) });
    expect(lateBatch.json).toEqual({ status: 'ok', problems: { [gone]: 'File is removed', [twin]: 'File is removed' }, result: [] });
    expect((await cdn(gone)).status).toBe(404);

    // The restored files kept their bytes through their old removal jobs, the twin's included.
    expect(await cdn(one)).toEqual({ status: 200, text: 'restored by PUT' });
    expect(await cdn(batched)).toEqual({ status: 200, text: 'restored by the batch' });

    // An unstored file's expiry is final at once.
    await until(async () => ((await srv.call('GET', `/files/${expiring}/`)).json.datetime_removed ? true : undefined), 20_000);
    expect((await srv.call('PUT', `/files/${expiring}/storage/`)).status).toBe(400);

    // The usual events: stored (the upload), deleted, stored again.
    await until(async () => (events(batched).length >= 3 && events(one).length >= 3 ? true : undefined), 20_000);
    expect(events(one)).toEqual(['file.stored', 'file.deleted', 'file.stored']);
    expect(events(batched)).toEqual(['file.stored', 'file.deleted', 'file.stored']);
  });

  it('a file removed again after its restore is reclaimed by the second removal alone', { timeout: 60_000 }, async () => {
    const uuid = await upload('again.txt', 'removed, restored, removed');
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const first = Date.now();
    expect((await srv.call('DELETE', `/files/${uuid}/storage/`)).status).toBe(200);
    expect((await srv.call('PUT', `/files/${uuid}/storage/`)).status).toBe(200);
    await sleep(WINDOW_MS / 2);
    expect((await srv.call('DELETE', `/files/${uuid}/storage/`)).status).toBe(200);
    // Past the first removal's job (due a window after it; jobs are polled every 200 ms), inside
    // the second removal's window: that job left the bytes alone, so the store still works.
    await sleep(Math.max(0, first + WINDOW_MS + 700 - Date.now()));
    const put = await srv.call('PUT', `/files/${uuid}/storage/`);
    expect(put.status, put.text).toBe(200);
    expect(await cdn(uuid)).toEqual({ status: 200, text: 'removed, restored, removed' });
  });

  it("the official REST client's own cases: store after deleteFile, storeFiles after deleteFiles", async () => {
    const settings = { authSchema: new UploadcareAuthSchema({ publicKey: srv.keys.public_key, secretKey: srv.keys.secret_key }), apiBaseURL: srv.rest };
    const uuid = await upload('sdk.txt', 'the suite stores what it deleted');
    const invalid = 'invalid-uuid-4f20-966f-caed5f978e15';
    // deleteFile.test.ts: store before, delete, store after.
    expect((await storeFile({ uuid }, settings)).uuid).toBe(uuid);
    expect((await deleteFile({ uuid }, settings)).uuid).toBe(uuid);
    const back = await storeFile({ uuid }, settings);
    expect(back).toMatchObject({ uuid, datetimeRemoved: null });
    // deleteFiles.test.ts: delete in a batch, then store in a batch.
    const deleted = await deleteFiles({ uuids: [uuid, invalid] }, settings);
    expect(deleted.result[0]?.uuid).toBe(uuid);
    expect(deleted.problems[invalid]).toBe('Invalid');
    const stored = await storeFiles({ uuids: [uuid] }, settings);
    expect(stored.problems).toEqual({});
    expect(stored.result[0]).toMatchObject({ uuid, datetimeRemoved: null });
    expect(await cdn(uuid)).toEqual({ status: 200, text: 'the suite stores what it deleted' });
  });
});

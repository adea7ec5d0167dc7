import { describe, expect, it } from 'vitest';
import { blobExists } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';
import { uploadBase } from '../helpers/rest.js';

// Unstored files live 3 s here instead of 24 h; a sweep runs every 500 ms.
const srv = useServer({ env: { STOWAGE_UNSTORED_TTL_MS: '3000', STOWAGE_EXPIRY_SWEEP_MS: '500' } });

const blobPath = (uuid: string) => `files/${uuid.slice(0, 2)}/${uuid}`;
/** In the data dir, or in the bucket when the suite runs on S3 (STOWAGE_TEST_S3). */
const stored = (uuid: string) => blobExists(srv.server, blobPath(uuid));

async function until(check: () => Promise<boolean> | boolean, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('file lifecycle', () => {
  it('expires unstored files after the TTL and reclaims their bytes; stored files stay', async () => {
    const temp = (await uploadBase(srv.upload, srv.keys.public_key, [{ name: 't.txt', data: 'temporary' }], { UPLOADCARE_STORE: '0' })).json.file;
    const kept = (await uploadBase(srv.upload, srv.keys.public_key, [{ name: 'k.txt', data: 'kept' }], { UPLOADCARE_STORE: '0' })).json.file;
    await srv.call('PUT', `/files/${kept}/storage/`);
    expect(await stored(temp)).toBe(true);
    // Still there well before the TTL.
    expect((await srv.call('GET', `/files/${temp}/`)).json.datetime_removed).toBeNull();
    await until(async () => (await srv.call('GET', `/files/${temp}/`)).json.datetime_removed !== null);
    await until(async () => !(await stored(temp)));
    expect((await fetch(`${srv.cdn}/${temp}/`)).status).toBe(404);
    const keptInfo = await srv.call('GET', `/files/${kept}/`);
    expect(keptInfo.json.datetime_removed).toBeNull();
    expect(await stored(kept)).toBe(true);
    expect((await fetch(`${srv.cdn}/${kept}/`)).status).toBe(200);
  });

  it('a removed file keeps its row and loses its bytes', async () => {
    const uuid = (await uploadBase(srv.upload, srv.keys.public_key, [{ name: 'r.txt', data: 'remove me' }], { UPLOADCARE_STORE: '1' })).json.file;
    expect(await stored(uuid)).toBe(true);
    await srv.call('DELETE', `/files/${uuid}/storage/`);
    await until(async () => !(await stored(uuid)));
    const row = await srv.call('GET', `/files/${uuid}/`);
    expect(row.status).toBe(200);
    expect(row.json.datetime_removed).not.toBeNull();
    expect(row.json.size).toBe(9);
    const removedList = await srv.call('GET', '/files/?removed=true');
    expect(removedList.json.results.map((f: { uuid: string }) => f.uuid)).toContain(uuid);
  });
});

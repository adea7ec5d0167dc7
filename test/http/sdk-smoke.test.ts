/** The official JS SDKs from npm, unchanged but for their base URLs, against a real server. */
import { beforeAll, describe, expect, it } from 'vitest';
import { uploadFile } from '@uploadcare/upload-client';
import {
  UploadcareAuthSchema,
  deleteFile,
  deleteMetadata,
  fileInfo,
  getMetadata,
  getMetadataValue,
  listOfFiles,
  paginate,
  storeFile,
  storeFiles,
  updateMetadata,
} from '@uploadcare/rest-client';
import { useServer } from '../helpers/use-server.js';

const srv = useServer({ project: ['--autostore', 'off'] });
let auth: UploadcareAuthSchema;
const settings = () => ({ authSchema: auth, apiBaseURL: srv.rest });

beforeAll(async () => {
  auth = new UploadcareAuthSchema({ publicKey: srv.keys.public_key, secretKey: srv.keys.secret_key });
});

describe('official SDKs', () => {
  it('upload, info, list, store, metadata, delete', async () => {
    const uploaded = await uploadFile(Buffer.from('hello from the SDK'), {
      publicKey: srv.keys.public_key,
      baseURL: srv.upload,
      baseCDN: srv.cdn,
      fileName: 'sdk.txt',
      store: 'auto',
      metadata: { origin: 'sdk' },
    });
    expect(uploaded.uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(uploaded.size).toBe(18);
    expect(uploaded.isStored).toBe(false);
    expect(uploaded.cdnUrl).toBe(`${srv.cdn}/${uploaded.uuid}/`);
    expect(await (await fetch(uploaded.cdnUrl as string)).text()).toBe('hello from the SDK');

    const info = await fileInfo({ uuid: uploaded.uuid }, settings());
    expect(info.originalFilename).toBe('sdk.txt');
    expect(info.metadata).toEqual({ origin: 'sdk' });

    const list = await listOfFiles({ limit: 10 }, settings());
    expect(list.results.map((f) => f.uuid)).toContain(uploaded.uuid);
    expect(list.total).toBeGreaterThanOrEqual(1);

    const stored = await storeFile({ uuid: uploaded.uuid }, settings());
    expect(stored.datetimeStored).toBeTruthy();

    await updateMetadata({ uuid: uploaded.uuid, key: 'color', value: 'blue' }, settings());
    expect(await getMetadataValue({ uuid: uploaded.uuid, key: 'color' }, settings())).toBe('blue');
    expect(await getMetadata({ uuid: uploaded.uuid }, settings())).toEqual({ origin: 'sdk', color: 'blue' });
    await deleteMetadata({ uuid: uploaded.uuid, key: 'color' }, settings());
    expect(await getMetadata({ uuid: uploaded.uuid }, settings())).toEqual({ origin: 'sdk' });

    const deleted = await deleteFile({ uuid: uploaded.uuid }, settings());
    expect(deleted.datetimeRemoved).toBeTruthy();
    expect((await fetch(uploaded.cdnUrl as string)).status).toBe(404);
  });

  it('batch store and the SDK paginator', async () => {
    const uuids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const f = await uploadFile(Buffer.from(`file ${i}`), { publicKey: srv.keys.public_key, baseURL: srv.upload, baseCDN: srv.cdn, fileName: `${i}.txt` });
      uuids.push(f.uuid);
    }
    const batch = await storeFiles({ uuids: [...uuids, 'nonsense'] }, settings());
    expect(batch.problems).toEqual({ nonsense: 'Invalid' });
    expect(batch.result).toHaveLength(5);
    const seen: string[] = [];
    const pages = paginate(listOfFiles);
    for await (const page of pages({ limit: 2, stored: true }, settings())) seen.push(...page.results.map((f) => f.uuid));
    for (const uuid of uuids) expect(seen).toContain(uuid);
    expect(new Set(seen).size).toBe(seen.length);
  });
});

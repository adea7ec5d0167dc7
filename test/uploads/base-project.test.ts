/**
 * A /base/ request finds its project once, when its public key is read: a change to the project
 * while the body is still on the wire applies from the next request. Observed through autostore,
 * switched off mid-body from another process and left until the server's key cache (2 s) has let
 * go of the old row: a second lookup at the end of the body would read the new setting.
 */
import { describe, expect, it } from 'vitest';
import { usingS3 } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';
import { uploadBase } from '../helpers/rest.js';
import { blobTreeBytes, sleep, until } from './helpers.js';
import { StreamedUpload } from './streamed-upload.js';

const srv = useServer();

const blobBytes = () => blobTreeBytes(srv.server.dataDir);

const isStored = async (pubKey: string, uuid: string): Promise<boolean> =>
  ((await (await fetch(`${srv.upload}/info/?pub_key=${pubKey}&file_id=${uuid}`)).json()) as { is_stored: boolean }).is_stored;

describe('POST /base/ and its project', () => {
  it('judges the upload against the project as it stood when the key was read', async () => {
    const p = await srv.server.createProject(); // autostore on
    const before = usingS3() ? 0 : blobBytes();
    const upload = new StreamedUpload(`${srv.upload}/base/?UPLOADCARE_PUB_KEY=${p.public_key}`);
    await upload.file(256 * 1024);
    // The key in the query string is read before the body: bytes being staged mean it was.
    if (usingS3()) await sleep(1000);
    else await until(async () => (blobBytes() > before ? true : undefined), 10_000, 20);

    srv.server.cli(['project', 'set', '--pub-key', p.public_key, '--autostore', 'off']);
    await sleep(2500); // longer than the server keeps a project it looked up
    const answer = await upload.end();
    expect(answer.status, answer.text).toBe(200);
    expect(await isStored(p.public_key, JSON.parse(answer.text).file)).toBe(true);

    // The next request reads the project afresh.
    const next = await uploadBase(srv.upload, p.public_key, [{ name: 'next.txt', data: 'next' }]);
    expect(next.status).toBe(200);
    expect(await isStored(p.public_key, next.json.file)).toBe(false);
  });
});

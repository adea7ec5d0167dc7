/**
 * A conversion path with an operation neither converter knows, as the official JS REST client's
 * own suite sends it (its conversionJobPoller test): the path is refused in `problems` with the
 * public service's text, and the client's poller reports it as a failed job with no result.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { ConversionStatus, ConversionType, UploadcareAuthSchema, conversionJobPoller } from '@uploadcare/rest-client';
import { useServer } from '../helpers/use-server.js';
import { makePdf, makeVideo } from './helpers.js';

const s = useServer();
let auth: UploadcareAuthSchema;
const settings = () => ({ authSchema: auth, apiBaseURL: s.rest });

beforeAll(() => {
  auth = new UploadcareAuthSchema({ publicKey: s.keys.public_key, secretKey: s.keys.secret_key });
});

describe('conversion paths with an unknown operation', () => {
  it('documents: the poller answers failed with "Operations parsing: Cannot parse url part: invalid"', async () => {
    const pdf = await s.uploadFile('one.pdf', makePdf(1, 72, 72));
    const paths = [`${pdf}/document/-/invalid/`];
    const jobs = await conversionJobPoller({ type: ConversionType.DOCUMENT, paths, store: false }, settings());
    expect(jobs).toHaveLength(1);
    await expect(jobs[0]).resolves.toEqual({ status: ConversionStatus.FAILED, error: 'Operations parsing: Cannot parse url part: invalid', path: paths[0], result: null });
    // The same text on the wire, for a path that names the operation after a good one.
    const later = `${pdf}/document/-/format/pdf/-/sharpen/`;
    const r = await s.call('POST', '/convert/document/', { body: JSON.stringify({ paths: [later] }) });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ problems: { [later]: 'Operations parsing: Cannot parse url part: sharpen' }, result: [] });
  });

  it('video: the same answer', async () => {
    const mp4 = await s.uploadFile('v.mp4', makeVideo('v.mp4', 1, '32x32', ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p'], false));
    const paths = [`${mp4}/video/-/invalid/`];
    const jobs = await conversionJobPoller({ type: ConversionType.VIDEO, paths, store: false }, settings());
    expect(jobs).toHaveLength(1);
    await expect(jobs[0]).resolves.toEqual({ status: ConversionStatus.FAILED, error: 'Operations parsing: Cannot parse url part: invalid', path: paths[0], result: null });
  });
});

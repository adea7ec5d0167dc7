/**
 * The official REST client's add-on calls (`executeAddon`, `addonExecutionStatus`, and its
 * `addonJobPoller`, which reads `appdata` right after `done`) against a real server and clamd.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AddonExecutionStatus, AddonName, UploadcareAuthSchema, addonExecutionStatus, addonJobPoller, executeAddon, fileInfo } from '@uploadcare/rest-client';
import { uploadFile } from '@uploadcare/upload-client';
import path from 'node:path';
import sharp from 'sharp';
import { useServer } from '../helpers/use-server.js';
import { ROOT } from '../helpers/server.js';
import { EICAR, startClamd, type TestClamd } from '../helpers/clamd.js';
import { readFileSync } from 'node:fs';
import { dinnerPhoto } from '../media/photos.js';

let clamd: TestClamd;
// The daemon first (registered before the fixture's hooks): the server is pointed at its socket.
beforeAll(async () => {
  clamd = await startClamd({ 'Eicar-Test-Signature': EICAR });
}, 60_000);
afterAll(async () => clamd?.stop());
const s = useServer(() => ({ env: { STOWAGE_CLAMD_ADDRESS: clamd.socket, STOWAGE_PLUGINS_DIR: path.join(ROOT, '.plugins'), STOWAGE_ADDON_TIMEOUT_MS: '600000' } }));

const settings = () => ({ authSchema: new UploadcareAuthSchema({ publicKey: s.keys.public_key, secretKey: s.keys.secret_key }), apiBaseURL: s.rest });

async function upload(data: Buffer | string, fileName: string): Promise<string> {
  const f = await uploadFile(Buffer.from(data), { publicKey: s.keys.public_key, baseURL: s.upload, baseCDN: s.cdn, fileName, store: true });
  return f.uuid;
}

describe('official REST client: add-ons', () => {
  it('uc_clamav_virus_scan: executeAddon, addonExecutionStatus, addonJobPoller', async () => {
    const uuid = await upload(EICAR, 'eicar.com');
    const { requestId } = await executeAddon({ addonName: AddonName.UC_CLAMAV_VIRUS_SCAN, target: uuid, params: { purge_infected: false } }, settings());
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    let status = await addonExecutionStatus({ addonName: AddonName.UC_CLAMAV_VIRUS_SCAN, requestId }, settings());
    for (let i = 0; i < 200 && status.status === AddonExecutionStatus.IN_PROGRESS; i++) {
      await new Promise((r) => setTimeout(r, 150));
      status = await addonExecutionStatus({ addonName: AddonName.UC_CLAMAV_VIRUS_SCAN, requestId }, settings());
    }
    expect(status.status).toBe(AddonExecutionStatus.DONE);
    const info = await fileInfo({ uuid, include: 'appdata' }, settings());
    expect(info.appdata?.uc_clamav_virus_scan?.data).toEqual({ infected: true, infected_with: 'Eicar-Test-Signature.UNOFFICIAL' });

    const clean = await upload('nothing to see', 'clean.txt');
    const polled = await addonJobPoller({ addonName: AddonName.UC_CLAMAV_VIRUS_SCAN, target: clean, params: { purge_infected: true }, pollOptions: { interval: 200, timeout: 30_000 } }, settings());
    expect(polled.error).toBe(false);
    expect(polled.result?.data).toEqual({ infected: false });
    expect(polled.result?.version).toBe('1.0.1');
  });

  it('aws_rekognition_detect_labels and _moderation_labels: executeAddon, addonExecutionStatus, appdata through fileInfo', async () => {
    const uuid = await upload(readFileSync(await dinnerPhoto()), 'dinner.jpg');
    for (const addonName of [AddonName.AWS_REKOGNITION_DETECT_LABELS, AddonName.AWS_REKOGNITION_DETECT_MODERATION_LABELS] as const) {
      const { requestId } = await executeAddon({ addonName, target: uuid }, settings());
      let status = await addonExecutionStatus({ addonName, requestId }, settings());
      for (let i = 0; i < 600 && status.status === AddonExecutionStatus.IN_PROGRESS; i++) {
        await new Promise((r) => setTimeout(r, 200));
        status = await addonExecutionStatus({ addonName, requestId }, settings());
      }
      expect(status.status, addonName).toBe(AddonExecutionStatus.DONE);
    }
    const info = await fileInfo({ uuid, include: 'appdata' }, settings());
    const labels = info.appdata?.aws_rekognition_detect_labels;
    expect(labels?.version).toBe('2016-06-27');
    expect(labels?.data.Labels.map((l) => l.Name)).toContain('Person');
    const moderation = info.appdata?.aws_rekognition_detect_moderation_labels;
    expect(moderation?.data.ModerationModelVersion).toMatch(/nsfwjs/);
    expect(moderation?.data.ModerationLabels).toEqual([]);
  });

  it('remove_bg: executeAddon, then addonExecutionStatus until done; the result is a new PNG file', async () => {
    const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="200" height="160"><rect width="100%" height="100%" fill="#f4f4f4"/><rect x="60" y="40" width="80" height="80" fill="#2255aa"/></svg>';
    const uuid = await upload(await sharp(Buffer.from(svg)).png().toBuffer(), 'box.png');
    const { requestId } = await executeAddon({ addonName: AddonName.REMOVE_BG, target: uuid, params: { crop: false } }, settings());
    let status = await addonExecutionStatus({ addonName: AddonName.REMOVE_BG, requestId }, settings());
    const end = Date.now() + 280_000;
    while (status.status === AddonExecutionStatus.IN_PROGRESS && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 300));
      status = await addonExecutionStatus({ addonName: AddonName.REMOVE_BG, requestId }, settings());
    }
    expect(status.status).toBe(AddonExecutionStatus.DONE);
    // The client types only `status`; the wire also carries result.file_id (wire-reference §2.11), camel-cased by the client.
    const fileId = (status as unknown as { result: { fileId: string } }).result.fileId;
    expect(fileId).toMatch(/^[0-9a-f-]{36}$/);
    const made = await fileInfo({ uuid: fileId }, settings());
    expect(made.mimeType).toBe('image/png');
    const info = await fileInfo({ uuid, include: 'appdata' }, settings());
    expect(info.appdata?.remove_bg?.data).toEqual({ foreground_type: 'auto' });
  }, 300_000);
});

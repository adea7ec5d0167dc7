/**
 * A fan-out serializes the file object once for all of an event's subscriptions (payloadBodies):
 * each body must be, byte for byte, the JSON of that subscription's whole payload (buildPayload),
 * since the signature covers the bytes and receivers parse them.
 */
import { describe, expect, it } from 'vitest';
import type { FileRecord } from '../../src/core/file-record.js';
import { apiInitiator, type FileEvent } from '../../src/jobs/file-events.js';
import { buildPayload, payloadBodies } from '../../src/webhooks/payload.js';
import type { Subscription } from '../../src/webhooks/repo.js';

const bases = { rest: 'https://api.example', upload: 'https://upload.example', cdn: 'https://cdn.example' };

const file: FileRecord = {
  uuid: '3e1b5a4c-0000-4000-8000-000000000001',
  projectId: 7,
  uploadedUs: 1_700_000_000_123_456,
  storedUs: 1_700_000_001_000_001,
  removedUs: null,
  size: 1234,
  mimeType: 'image/png',
  declaredType: 'image/png',
  originalFilename: 'a "quoted" näme.png',
  filename: 'aquotedname.png',
  isImage: true,
  isReady: true,
  contentInfo: { mime: { mime: 'image/png', type: 'image', subtype: 'png' }, image: { width: 2, height: 3 } } as unknown as FileRecord['contentInfo'],
  metadata: { colour: 'blue', 'key\nwith': 'line\u2028sep' },
  appdata: {},
  blobKey: 'blob',
  md5: 'd41d8cd98f00b204e9800998ecf8427e',
  sourceUrl: null,
  tags: ['x', 'y'],
};

const subscription = (id: number, targetUrl: string, isActive: boolean): Subscription => ({
  id,
  projectId: 7,
  event: 'file.info_updated',
  targetUrl,
  isActive,
  signingSecret: 'secret',
  version: '0.7',
  createdUs: 1_600_000_000_000_007,
  updatedUs: 1_600_000_000_500_000,
});

describe('payloadBodies', () => {
  const subs = [subscription(1, 'https://a.example/hook', true), subscription(2, 'https://b.example/h?x="1"', false)];

  it('is the JSON of each subscription’s payload, byte for byte, for every event shape', () => {
    const events: FileEvent[] = [
      { projectId: 7, event: 'file.stored', uuid: file.uuid, initiator: apiInitiator('req-1') },
      { projectId: 7, event: 'file.info_updated', uuid: file.uuid, initiator: apiInitiator(null), previousValues: { metadata: { colour: null }, tags: ['z'] } },
      { projectId: 7, event: 'file.info_updated', uuid: file.uuid, initiator: apiInitiator(null) },
      { projectId: 7, event: 'file.deleted', uuid: file.uuid, initiator: apiInitiator(null) },
    ];
    for (const event of events) {
      const bodies = payloadBodies({ event, projectPubKey: 'pub', file, bases }, subs);
      expect(bodies).toEqual(subs.map((s) => JSON.stringify(buildPayload({ event, subscription: s, projectPubKey: 'pub', file, bases }))));
      for (const [i, body] of bodies.entries()) expect(JSON.parse(body).hook.id).toBe(subs[i]!.id);
    }
  });

  it('has no body for no subscription', () => {
    expect(payloadBodies({ event: { projectId: 7, event: 'file.stored', uuid: file.uuid, initiator: apiInitiator(null) }, projectPubKey: 'pub', file, bases }, [])).toEqual([]);
  });
});

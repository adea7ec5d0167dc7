/** The official JS REST client's webhook calls, unchanged, against a real server. */
import { beforeAll, describe, expect, it } from 'vitest';
import { UploadcareAuthSchema, WebhookEvent, createWebhook, deleteWebhook, listOfWebhooks, updateWebhook } from '@uploadcare/rest-client';
import { useServer } from '../helpers/use-server.js';

const srv = useServer();
let auth: UploadcareAuthSchema;
const settings = () => ({ authSchema: auth, apiBaseURL: srv.rest });

beforeAll(async () => {
  const keys = await srv.server.createProject();
  auth = new UploadcareAuthSchema({ publicKey: keys.public_key, secretKey: keys.secret_key });
});

describe('@uploadcare/rest-client webhooks', () => {
  it('create, list, update, delete', async () => {
    const created = await createWebhook({ targetUrl: 'https://example.com/sdk', event: WebhookEvent.FILE_UPLOADED, isActive: true, signingSecret: 'sdk-secret' }, settings());
    expect(created).toMatchObject({ targetUrl: 'https://example.com/sdk', event: 'file.uploaded', isActive: true, signingSecret: 'sdk-secret', version: '0.7' });
    expect(typeof created.id).toBe('number');

    const updated = await updateWebhook({ id: created.id, isActive: false }, settings());
    expect(updated).toMatchObject({ id: created.id, isActive: false, targetUrl: 'https://example.com/sdk' });

    const listed = await listOfWebhooks({}, settings());
    expect(listed.map((w) => w.id)).toEqual([created.id]);

    await deleteWebhook({ targetUrl: 'https://example.com/sdk' }, settings());
    expect(await listOfWebhooks({}, settings())).toEqual([]);
  });

  it('surfaces the duplicate error', async () => {
    await createWebhook({ targetUrl: 'https://example.com/twice', event: 'file.stored' as WebhookEvent }, settings());
    await expect(createWebhook({ targetUrl: 'https://example.com/twice', event: 'file.stored' as WebhookEvent }, settings())).rejects.toThrow(/already subscribed/);
  });
});

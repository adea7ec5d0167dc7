/**
 * The signing formula against the published test vector of uploadcare-ruby
 * (spec/uploadcare/param/webhook_signature_verifier_spec.rb: secret `12345X`). The body is the
 * Ruby hash's `to_json`, which JSON.stringify reproduces byte for byte for this object.
 */
import { describe, expect, it } from 'vitest';
import { signatureHeader } from '../../src/webhooks/signature.js';
import { validSignature } from './receiver.js';

const imageInfo = { color_mode: 'RGB', format: 'JPEG', height: 168, width: 300, orientation: null, dpi: null, geo_location: null, datetime_original: null, sequence: false };
const BODY = JSON.stringify({
  payload_hash: '1844671900',
  data: {
    uuid: 'f08d7c8a-2971-42e0-ab01-780d9039b40b',
    image_info: imageInfo,
    video_info: null,
    content_info: { mime: { mime: 'image/jpeg', type: 'image', subtype: 'jpeg' }, video: null, image: imageInfo },
    mime_type: 'image/jpeg',
    original_filename: 'download.jpeg',
    size: 10603,
    is_image: true,
    is_ready: true,
    datetime_removed: null,
    datetime_stored: null,
    datetime_uploaded: null,
    original_file_url: 'https://ucarecdn.com/f08d7c8a-2971-42e0-ab01-780d9039b40b/download.jpeg',
    url: '',
    source: null,
    variations: null,
    rekognition_info: null,
  },
  hook: {
    id: 889783,
    project_id: 123681,
    target: 'https://6f48-188-232-175-230.ngrok.io/posts',
    event: 'file.uploaded',
    is_active: true,
    created_at: '2021-11-18T06:17:42.730459Z',
    updated_at: '2021-11-18T06:17:42.730459Z',
  },
  file: 'https://ucarecdn.com/f08d7c8a-2971-42e0-ab01-780d9039b40b/download.jpeg',
});
const HEADER = 'v1=9b31c7dd83fdbf4a2e12b19d7f2b9d87d547672a325b9492457292db4f513c70';

describe('X-Uc-Signature', () => {
  it('the server signs the test vector to the published header', () => {
    expect(signatureHeader('12345X', BODY)).toBe(HEADER);
    expect(signatureHeader('12345', BODY)).not.toBe(HEADER);
  });

  it('the tests’ own verifier accepts the vector and rejects a wrong secret or a changed body', () => {
    expect(validSignature('12345X', BODY, HEADER)).toBe(true);
    expect(validSignature('12345', BODY, HEADER)).toBe(false);
    expect(validSignature('12345X', BODY.replace('10603', '10604'), HEADER)).toBe(false);
    expect(validSignature('12345X', BODY, HEADER.slice(3))).toBe(false);
  });
});

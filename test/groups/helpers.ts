/** Shared helpers of the group tests: uploads, group creation over the Upload API, PNG fixtures. */
import crypto from 'node:crypto';
import { expect } from 'vitest';
import sharp from 'sharp';
import type { ProjectKeys, TestServer } from '../helpers/server.js';
import { uploadBase } from '../helpers/rest.js';
import { request, type Res } from '../helpers/http.js';

export async function upload(server: TestServer, keys: ProjectKeys, name: string, data: Buffer | string, type?: string): Promise<string> {
  const r = await uploadBase(server.upload, keys.public_key, [{ name, data, ...(type ? { type } : {}) }], { UPLOADCARE_STORE: '1' });
  expect(r.status, r.text).toBe(200);
  return r.json.file as string;
}

/** POST /group/ with the given (key, value) pairs as multipart form fields. */
export async function postGroup(server: Pick<TestServer, 'upload'>, pairs: Array<[string, string]>, query = ''): Promise<Res> {
  const form = new FormData();
  for (const [k, v] of pairs) form.append(k, v);
  return request(`${server.upload}/group/${query}`, { method: 'POST', body: form });
}

export async function makeGroup(server: TestServer, keys: ProjectKeys, entries: string[]): Promise<string> {
  const r = await postGroup(server, [['pub_key', keys.public_key], ...entries.map((e): [string, string] => ['files[]', e])]);
  expect(r.status, r.text).toBe(200);
  return r.json.id as string;
}

export function png(width: number, height: number, rgb: [number, number, number] = [200, 40, 40]): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: rgb[0], g: rgb[1], b: rgb[2] } } }).png().toBuffer();
}

export const randomBytes = (n: number): Buffer => crypto.randomBytes(n);

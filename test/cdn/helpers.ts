/** Helpers for the CDN image tests: upload through /base/, fetch over HTTP, read pixels with sharp. */
import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import sharp from 'sharp';
import type { ProjectKeys, TestServer } from '../helpers/server.js';
import { uploadBase } from '../helpers/rest.js';
import { request, type Res } from '../helpers/http.js';

export async function put(server: TestServer, keys: ProjectKeys, name: string, data: Buffer | string, type?: string): Promise<string> {
  const r = await uploadBase(server.upload, keys.public_key, [{ name, data, type }], { UPLOADCARE_STORE: '1' });
  expect(r.status, r.text).toBe(200);
  return r.json.file as string;
}

/** Uploads a fixture file from disk (fixtures in test/media/fixtures.ts return paths). */
export async function putFile(server: TestServer, keys: ProjectKeys, path: string, name = path.split('/').pop()!): Promise<string> {
  return put(server, keys, name, readFileSync(path));
}

export async function get(server: Pick<TestServer, 'cdn'>, path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Res> {
  return request(server.cdn + path, { headers, method });
}

/** RGBA of pixel (x, y) of an encoded image (negative x/y count from the right/bottom). */
export async function pixel(buf: Buffer, x: number, y: number): Promise<number[]> {
  const { data, info } = await sharp(buf).ensureAlpha().toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });
  const px = x < 0 ? info.width + x : x;
  const py = y < 0 ? info.height + y : y;
  const o = (py * info.width + px) * 4;
  return [...data.subarray(o, o + 4)];
}

export const near = (a: number[], b: number[], tol = 24): boolean => b.every((v, i) => Math.abs(a[i]! - v) <= tol);

export async function dims(buf: Buffer): Promise<[number, number, string]> {
  const m = await sharp(buf).metadata();
  return [m.width, m.height, m.format];
}

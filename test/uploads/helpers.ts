/** Small HTTP helpers for the upload suites (plain fetch; nothing from the server's code). */
import fs from 'node:fs';
import path from 'node:path';
import { request, type Res } from '../helpers/http.js';

/** POST with urlencoded fields (the way pyuploadcare sends them). */
export async function postForm(url: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<Res> {
  return request(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(fields).toString() });
}

/** Body-less POST with everything in the query string (the way the JS SDK calls /from_url/). */
export async function postQuery(url: string, query: Record<string, string>, headers: Record<string, string> = {}): Promise<Res> {
  return request(`${url}?${new URLSearchParams(query).toString()}`, { method: 'POST', headers });
}

export async function get(url: string, headers: Record<string, string> = {}): Promise<Res> {
  return request(url, { headers });
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until `check` returns a value (not undefined) or the deadline passes. */
export async function until<T>(check: () => Promise<T | undefined>, timeoutMs = 30_000, everyMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(everyMs);
  }
}

/** Deterministic pseudo-random bytes (xorshift), so big payloads need no fixture files. */
export function bytes(n: number, seed = 1): Buffer {
  const out = Buffer.allocUnsafe(n);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

/**
 * Bytes in a server's blob tree (`<dataDir>/blobs`) right now: staged uploads as they arrive, temp
 * files and blobs. A file or folder that vanishes while it is walked counts as empty.
 */
export function blobTreeBytes(dataDir: string): number {
  let total = 0;
  const walk = (dir: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else total += fs.statSync(p, { throwIfNoEntry: false })?.size ?? 0;
    }
  };
  walk(path.join(dataDir, 'blobs'));
  return total;
}

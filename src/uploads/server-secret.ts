/**
 * Server-side secrets (e.g. the key that signs multipart part URLs), created on first use and kept
 * in the metadata store so every node of a cluster signs and verifies with the same key and a
 * restart does not invalidate URLs already handed out.
 */
import type { Db } from '../db/connect.js';
import { loadServerSecret } from '../db/server-secrets.js';

const cache = new Map<string, Promise<Buffer>>();

export function serverSecret(db: Db, name: string): Promise<Buffer> {
  let p = cache.get(name);
  if (!p) {
    p = loadServerSecret(db, name);
    cache.set(name, p);
    p.catch(() => cache.delete(name));
  }
  return p;
}

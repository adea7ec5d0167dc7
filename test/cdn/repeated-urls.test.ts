// A repeated CDN URL is answered from what its first request parsed and hashed: the kept values must
// be exactly what parsing and hashing give, shared safely between requests, and never a mistake's.
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseCdnPath } from '../../src/http/cdn/url.js';
import { renditionKey } from '../../src/delivery/result-cache.js';

const UUID = '3b7a1c2e-9f4d-4e21-8a6b-0c5d7e9f1a2b';

describe('repeated CDN URLs', () => {
  it('parse once: the same request again, frozen so no handler can change what the next one gets', () => {
    const path = `/${UUID}/-/resize/460x/-/format/webp/photo.webp`;
    const first = parseCdnPath(path);
    const again = parseCdnPath(path);
    expect(again).toBe(first);
    if (first.kind !== 'file') throw new Error('expected a file request');
    expect(first.plan.canonical).toBe('-/resize/460x/-/format/webp');
    expect(first.filename).toBe('photo.webp');
    expect(Object.isFrozen(first.plan.steps)).toBe(true);
    expect(() => (first.plan.steps as unknown[]).push({})).toThrow(TypeError);
    expect(() => {
      (first.plan as { canonical: string }).canonical = 'changed';
    }).toThrow(TypeError);
  });

  it('a bad URL is refused every time (mistakes are not kept)', () => {
    const bad = `/${UUID}/-/resize/nonsense/`;
    expect(() => parseCdnPath(bad)).toThrow(/resize/);
    expect(() => parseCdnPath(bad)).toThrow(/resize/);
  });

  it('rendition keys stay the SHA-256 of their input (the disk cache and ETags of earlier runs stay valid)', () => {
    const plan = parseCdnPath(`/${UUID}/-/resize/460x/`);
    if (plan.kind !== 'file') throw new Error('expected a file request');
    const expected = crypto.createHash('sha256').update(`v1\n${UUID}\n-/resize/460x\nwebp`).digest('hex');
    const a = renditionKey(UUID, plan.plan, 'webp');
    expect(a.key).toBe(expected);
    expect(a.etag).toBe(`"${expected.slice(0, 40)}"`);
    expect(renditionKey(UUID, plan.plan, 'webp')).toEqual(a);
    expect(renditionKey(UUID, plan.plan, 'avif').key).not.toBe(a.key);
  });
});

/**
 * content_info.image of an uploaded SVG: read the way the CDN reads it (librsvg in a child process
 * with a deadline), and for an SVG too complex to parse in time, its root element's declared size,
 * so it stays an image that the CDN delivers as SVG.
 */
import { describe, expect, it } from 'vitest';
import { useServer } from '../helpers/use-server.js';

const s = useServer();
const NS = 'xmlns="http://www.w3.org/2000/svg"';

async function imageInfo(uuid: string): Promise<{ isImage: unknown; image: Record<string, unknown> | undefined }> {
  const r = await s.call('GET', `/files/${uuid}/`);
  expect(r.status).toBe(200);
  const file = r.json as { is_image: unknown; content_info: { image?: Record<string, unknown> } };
  return { isImage: file.is_image, image: file.content_info.image };
}

describe('SVG image facts at upload', () => {
  it('an ordinary SVG: its size as the CDN reads it', async () => {
    const uuid = await s.uploadFile('a.svg', `<svg ${NS} width="120" height="80"><rect width="120" height="80" fill="red"/></svg>`, { type: 'image/svg+xml' });
    const { isImage, image } = await imageInfo(uuid);
    expect(isImage).toBe(true);
    expect(image).toMatchObject({ format: 'SVG', width: 120, height: 80 });
    const json = await fetch(`${s.cdn}/${uuid}/-/json/`).then((r) => r.json() as Promise<{ width: number; height: number }>);
    expect([json.width, json.height]).toEqual([120, 80]);
  });

  it('a viewBox without width and height gives the viewBox size', async () => {
    const uuid = await s.uploadFile('v.svg', `<svg ${NS} viewBox="0 0 64 32"><circle cx="8" cy="8" r="8"/></svg>`, { type: 'image/svg+xml' });
    expect((await imageInfo(uuid)).image).toMatchObject({ format: 'SVG', width: 64, height: 32 });
  });

  it('an SVG with more elements than can be rasterized is described by its declared size, and still delivered as SVG', async () => {
    const svg = `<svg ${NS} width="1000" height="700">${'<circle cx="5" cy="5" r="5"/>'.repeat(60_000)}</svg>`;
    const uuid = await s.uploadFile('many.svg', svg, { type: 'image/svg+xml' });
    const { isImage, image } = await imageInfo(uuid);
    expect(isImage).toBe(true);
    expect(image).toMatchObject({ format: 'SVG', width: 1000, height: 700 });
    const resized = await fetch(`${s.cdn}/${uuid}/-/resize/100x/`);
    expect(resized.status).toBe(200);
    expect(resized.headers.get('content-type')).toBe('image/svg+xml');
    expect(await resized.text()).toMatch(/<svg[^>]* width="100"/);
  });
});

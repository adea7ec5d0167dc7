/** The name a fetched file gets when the request did not give one: Content-Disposition, else the URL path. */
import type { OutboundResponse } from '../../net/outbound.js';

export function filenameFor(res: OutboundResponse): string {
  const cd = res.headers['content-disposition'] ?? '';
  const star = /filename\*\s*=\s*(?:UTF-8|utf-8)''([^;]+)/.exec(cd)?.[1];
  if (star) {
    try {
      return decodeURIComponent(star.trim());
    } catch {
      /* fall through */
    }
  }
  const plain = /filename\s*=\s*"([^"]*)"|filename\s*=\s*([^;]+)/.exec(cd);
  const name = plain?.[1] ?? plain?.[2]?.trim();
  if (name) return name;
  try {
    const last = new URL(res.finalUrl).pathname.split('/').filter(Boolean).pop();
    if (last) return decodeURIComponent(last);
  } catch {
    /* fall through */
  }
  return 'original';
}

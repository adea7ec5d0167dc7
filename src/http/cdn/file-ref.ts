/**
 * A reference to a file as clients write it in `/group/` entries and copy sources
 * (wire-reference §1.9, §2.6): a bare uuid, `uuid/-/ops/`, or a CDN URL `https://host/uuid/-/ops/[name]`,
 * read with the CDN's own URL parser. Only the uuid and the operations matter; the host of a URL is
 * not checked because the file must belong to the caller's project anyway (and pyuploadcare sends
 * the vendor's CDN host by default).
 */
import type { Plan } from '../../media/plan.js';
import { parseCdnPath } from './url.js';

export interface FileRef {
  uuid: string;
  plan: Plan;
  /** Operation segments as written (still percent-encoded), each op introduced by '-'. */
  written: string[];
}

/** Parses a reference, or returns null when it is not one (operations included). */
export function parseFileRef(text: string): FileRef | null {
  const raw = text.trim();
  if (raw === '' || raw.length > 4096) return null;
  let path: string;
  if (/^https?:\/\//i.test(raw)) {
    try {
      path = new URL(raw).pathname;
    } catch {
      return null;
    }
  } else {
    // Only a URL ends with a filename: a bare reference is all uuid and operations.
    path = `/${raw}/`;
  }
  try {
    const request = parseCdnPath(path);
    // References name operations after `-/` only (no bare gif2video).
    if (request.kind !== 'file' || (request.written.length > 0 && request.written[0] !== '-')) return null;
    return { uuid: request.uuid, plan: request.plan, written: request.written };
  } catch {
    return null;
  }
}

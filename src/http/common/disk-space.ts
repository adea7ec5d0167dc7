/**
 * A full disk (or an exhausted quota) is not a bug in the request: every surface answers it as
 * 507 Insufficient Storage with a clear message and a Retry-After, in its own error format, and
 * readiness reports a data dir whose free space is below the configured minimum.
 *
 * 507 rather than 503: the condition is "cannot store", which monitoring and operators should tell
 * apart from overload (503); the Retry-After still tells clients that a later attempt may succeed.
 */
import fsp from 'node:fs/promises';
import type { Logger } from 'pino';
import type { RequestRef } from './request-ref.js';
import { AppError } from '../../core/errors.js';
import { commonErrors } from '../../core/error-catalogue/common.js';


/** errno codes (local disk, quota), SQLite's and PostgreSQL's "disk full", and MinIO's. */
const OUT_OF_SPACE_CODES = new Set(['ENOSPC', 'EDQUOT', 'SQLITE_FULL', '53100', 'XMinioStorageFull']);

interface ErrorLike {
  code?: unknown;
  name?: unknown;
  cause?: unknown;
  $metadata?: { httpStatusCode?: number };
}

/** True for a full disk anywhere in the error or the errors it wraps (`cause`). */
export function isOutOfSpace(err: unknown): boolean {
  let e = err as ErrorLike | null | undefined;
  for (let depth = 0; e && typeof e === 'object' && depth < 4; depth++) {
    if (OUT_OF_SPACE_CODES.has(String(e.code)) || OUT_OF_SPACE_CODES.has(String(e.name))) return true;
    // S3-compatible stores answer 507 when their disks are full.
    if (e.$metadata?.httpStatusCode === 507) return true;
    e = e.cause as ErrorLike | null | undefined;
  }
  return false;
}

/**
 * The error each surface renders for a full disk (`code` is the Upload API's error_code). Logged
 * as a warning without a stack: the operator has to free space, the code has no bug to show.
 */
export function insufficientStorage(log: Logger, err: unknown, where: RequestRef): AppError {
  const e = err as ErrorLike;
  log.warn({ ...where, reason: String(e.code ?? e.name ?? 'full') }, 'out of storage space');
  return commonErrors.insufficientStorage();
}

/** Bytes available to this (unprivileged) process in the file system holding `dir`. */
export async function freeBytes(dir: string): Promise<number> {
  const s = await fsp.statfs(dir);
  return s.bavail * s.bsize;
}

/** tus helpers for the suites: the official tus-js-client wrapped in a promise, and raw requests. */
import fs from 'node:fs';
import path from 'node:path';
import * as tus from 'tus-js-client';
import { request, type Res } from '../helpers/http.js';

export interface TusResult {
  url: string;
  /** The finished file's uuid (Stowage-File-Uuid on the last response). */
  fileUuid: string | null;
  /** Upload-Offset of every PATCH the client sent, in order. */
  patchOffsets: number[];
}

export type TusOptions = Omit<tus.UploadOptions, 'onSuccess' | 'onError'> & {
  /** Called with the upload once it started, e.g. to abort it from a callback. */
  withUpload?: (u: tus.Upload) => void;
};

/** Runs one upload with tus-js-client; resolves on success, rejects with the client's error. */
export function tusUpload(data: Buffer, opts: TusOptions): Promise<TusResult> {
  const result: TusResult = { url: '', fileUuid: null, patchOffsets: [] };
  return new Promise((resolve, reject) => {
    const { withUpload, ...options } = opts;
    const upload = new tus.Upload(data, {
      retryDelays: [],
      ...options,
      onBeforeRequest: async (req) => {
        if (req.getMethod() === 'PATCH') result.patchOffsets.push(Number(req.getHeader('Upload-Offset')));
        await options.onBeforeRequest?.(req);
      },
      onAfterResponse: async (req, res) => {
        const uuid = res.getHeader('Stowage-File-Uuid');
        if (uuid) result.fileUuid = uuid;
        await options.onAfterResponse?.(req, res);
      },
      onSuccess: () => resolve({ ...result, url: upload.url ?? '' }),
      onError: (err) => reject(err),
    });
    withUpload?.(upload);
    upload.start();
  });
}

/** The HTTP status a tus-js-client error carries (DetailedError.originalResponse), or null. */
export function errorStatus(err: unknown): number | null {
  const res = (err as { originalResponse?: { getStatus(): number } | null }).originalResponse;
  return res ? res.getStatus() : null;
}

/** Upload-Metadata from plain strings. */
export function metadataHeader(pairs: Record<string, string>): string {
  return Object.entries(pairs)
    .map(([k, v]) => `${k} ${Buffer.from(v).toString('base64')}`)
    .join(',');
}

export const TUS = { 'tus-resumable': '1.0.0' };

export function create(base: string, length: number, meta: Record<string, string>, extra: Record<string, string> = {}): Promise<Res> {
  return request(`${base}/tus/`, { method: 'POST', headers: { ...TUS, 'upload-length': String(length), 'upload-metadata': metadataHeader(meta), ...extra } });
}

export function patch(url: string, offset: number, body: Buffer, extra: Record<string, string> = {}): Promise<Res> {
  return request(url, { method: 'PATCH', headers: { ...TUS, 'content-type': 'application/offset+octet-stream', 'upload-offset': String(offset), ...extra }, body });
}

export function head(url: string): Promise<Res> {
  return request(url, { method: 'HEAD', headers: TUS });
}

/** Staging files in the server's data dir (one per unfinished upload). */
export function stagedFiles(dataDir: string): string[] {
  try {
    return fs.readdirSync(path.join(dataDir, 'tus'));
  } catch {
    return [];
  }
}

/** Bytes in an upload's staging file (written, not necessarily durable yet); 0 when absent. */
export function stagedSize(dataDir: string, id: string): number {
  try {
    return fs.statSync(path.join(dataDir, 'tus', id)).size;
  } catch {
    return 0;
  }
}

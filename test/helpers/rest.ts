/** A REST client that signs requests exactly as the spec describes (independent of server code). */
import crypto from 'node:crypto';
import { request, type Res } from './http.js';

export interface RestOptions {
  body?: string | Buffer;
  contentType?: string;
  accept?: string | null;
  date?: Date | string;
  dateHeader?: 'Date' | 'X-Uploadcare-Date' | 'X-Svc-Date';
  scheme?: string;
  authorization?: string | null;
  headers?: Record<string, string>;
}

export function sign(secret: string, method: string, body: string | Buffer, contentType: string, date: string, uri: string): string {
  const md5 = crypto.createHash('md5').update(body).digest('hex');
  return crypto.createHmac('sha1', secret).update([method, md5, contentType, date, uri].join('\n')).digest('hex');
}

/** A signed REST call: method, path with query, options; answers the read response. */
export type RestCall = (method: string, pathAndQuery: string, opts?: RestOptions) => Promise<Res>;

export function restClient(base: string, keys: { public_key: string; secret_key: string }): RestCall {
  return async function call(method: string, pathAndQuery: string, opts: RestOptions = {}): Promise<Res> {
    const body = opts.body ?? '';
    const contentType = opts.contentType ?? 'application/json';
    const date = typeof opts.date === 'string' ? opts.date : (opts.date ?? new Date()).toUTCString();
    const headers: Record<string, string> = { 'content-type': contentType, ...(opts.headers ?? {}) };
    if (opts.accept !== null) headers['accept'] = opts.accept ?? 'application/vnd.uploadcare-v0.7+json';
    headers[(opts.dateHeader ?? 'Date').toLowerCase()] = date;
    if (opts.authorization !== null) {
      headers['authorization'] =
        opts.authorization ?? `${opts.scheme ?? 'Uploadcare'} ${keys.public_key}:${sign(keys.secret_key, method, body, contentType, date, pathAndQuery)}`;
    }
    return request(base + pathAndQuery, { method, headers, ...(method === 'GET' || method === 'HEAD' ? {} : { body }) });
  };
}

/** Direct upload of in-memory files through /base/. */
export async function uploadBase(
  uploadUrl: string,
  pubKey: string,
  files: Array<{ field?: string; name: string; data: Buffer | string; type?: string }>,
  fields: Record<string, string> = {},
  query = '',
): Promise<Res> {
  const form = new FormData();
  for (const f of files) form.append(f.field ?? 'file', new Blob([f.data], { type: f.type ?? 'application/octet-stream' }), f.name);
  form.append('UPLOADCARE_PUB_KEY', pubKey);
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  return request(`${uploadUrl}/base/${query}`, { method: 'POST', body: form });
}

// Calls to the REST API with the session cookie. Every call names itself with the dashboard
// header (the server refuses a cookie without it) and the API version the REST API asks for.

const ACCEPT = 'application/vnd.svc-v0.7+json';

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/** Calls path (same origin) with an optional JSON body; answers the parsed JSON (null for 204). */
export async function api(method, path, body) {
  const headers = { accept: ACCEPT, 'x-stowage-dashboard': '1' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path, { method, headers, credentials: 'same-origin', body: body === undefined ? undefined : JSON.stringify(body) });
  if (res.status === 401 && !path.startsWith('/dashboard/api/')) window.dispatchEvent(new Event('stowage:signed-out'));
  const text = await res.text();
  const json = text ? safeJson(text) : null;
  if (!res.ok) throw new ApiError(res.status, describe(res.status, json));
  return json;
}

function safeJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return { detail: text.slice(0, 200) };
  }
}

function describe(status, json) {
  if (json && typeof json.detail === 'string') return json.detail;
  if (json && typeof json === 'object') {
    return Object.entries(json).map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(' ') : String(v)}`).join('; ');
  }
  return `HTTP ${status}`;
}

/** The path and query of an API `next` link (absolute, built from the REST base URL). */
export function pathOf(link) {
  const u = new URL(link, location.href);
  return u.pathname + u.search;
}

// A file's preview by kind: images (a CDN preview), documents (their first page as a PNG, made once
// by a conversion), videos and audio (the browser's player from the CDN), text (its first 16 KiB).
import { api } from './api.js';
import { errorLine, h, show } from './dom.js';
import { cdnUrl } from './files.js';

const TEXT_BYTES = 16 * 1024;
const TEXT_TYPES = /^(text\/|application\/(json|xml|javascript|x-ndjson|yaml|x-yaml|csv|x-sh))/;

export function previewKind(file) {
  const type = file.mime_type || '';
  if (file.datetime_removed || !file.is_ready) return null;
  if (file.is_image) return 'image';
  if (type.startsWith('video/')) return 'video';
  if (type.startsWith('audio/')) return 'audio';
  if (TEXT_TYPES.test(type)) return 'text';
  return 'document'; // asked to the conversion API: 400 when the file is not a document
}

/** The preview block (or null when the file has nothing to show); fills itself in as it loads. */
export function preview(file, session) {
  const kind = previewKind(file);
  if (!kind) return null;
  const box = h('div', { id: 'preview', class: 'preview', 'data-kind': kind });
  const url = (path) => cdnUrl(session, path);
  if (kind === 'image') show(box, h('img', { alt: 'preview', src: url(`/${file.uuid}/-/preview/800x600/`) }));
  if (kind === 'video') {
    // The media fragment makes the player show the frame at 0.1 s as its poster before it plays.
    show(box, h('video', { controls: true, preload: 'metadata', src: `${url(`/${file.uuid}/`)}#t=0.1` }));
  }
  if (kind === 'audio') show(box, h('audio', { controls: true, preload: 'metadata', src: url(`/${file.uuid}/`) }));
  if (kind === 'text') textPreview(box, file, url).catch((err) => show(box, errorLine(err)));
  if (kind === 'document') documentPreview(box, file, url).catch((err) => show(box, errorLine(err)));
  return box;
}

async function textPreview(box, file, url) {
  const res = await fetch(url(`/${file.uuid}/`), { headers: { range: `bytes=0-${TEXT_BYTES - 1}` } });
  if (!res.ok) throw new Error(`The CDN answered ${res.status}.`);
  const text = new TextDecoder('utf-8', { fatal: false }).decode(await res.arrayBuffer());
  show(box, h('pre', { class: 'text-preview' }, text), file.size > TEXT_BYTES ? h('p', { class: 'muted' }, `The first ${TEXT_BYTES / 1024} KiB of ${file.size} bytes.`) : null);
}

/**
 * The first page of a document as a PNG. The CDN serves the newest finished conversion of the file
 * to that target; the first time there is none (404), the page asks for one (an unstored PNG file
 * of the project, kept like any unstored file) and shows it when the job has finished.
 */
async function documentPreview(box, file, url) {
  const info = await api('GET', `/convert/document/${file.uuid}/`).catch(() => null);
  if (!info) return box.remove(); // not a document: no preview
  const path = `${file.uuid}/document/-/format/png/-/page/1/`;
  const img = h('img', { alt: 'first page', class: 'page' });
  show(box, img, h('p', { class: 'muted', id: 'preview-note' }, 'First page'));
  const converted = await loads(img, url(`/${path}`));
  if (converted) return;
  show(box, h('p', { class: 'muted' }, 'Making a preview of the first page…'));
  const answer = await api('POST', '/convert/document/', { paths: [path], store: '0' });
  const job = answer.result?.[0];
  if (!job) throw new Error(Object.values(answer.problems ?? {})[0] ?? 'The document could not be converted.');
  const done = await waitFor(() => api('GET', `/convert/document/status/${job.token}/`));
  if (done.status !== 'finished') throw new Error(`No preview: the conversion ${done.status}${done.error ? `: ${done.error}` : ''}.`);
  show(box, img, h('p', { class: 'muted', id: 'preview-note' }, 'First page'));
  await loads(img, url(`/${done.result.uuid}/-/preview/800x800/`));
}

function loads(img, src) {
  return new Promise((resolve) => {
    img.addEventListener('load', () => resolve(true), { once: true });
    img.addEventListener('error', () => resolve(false), { once: true });
    img.src = src;
  });
}

/** Polls `check` about once a second until its status is no longer pending or processing (two minutes at most). */
export async function waitFor(check, busy = ['pending', 'processing', 'in_progress']) {
  for (let i = 0; i < 120; i++) {
    const state = await check();
    if (!busy.includes(state.status)) return state;
    await new Promise((r) => setTimeout(r, 1000));
  }
  throw new Error('Still running after two minutes: look again later.');
}

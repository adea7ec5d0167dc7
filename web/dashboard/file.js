// One file: a preview, download and copy buttons, its fields, store/remove, tags, metadata (edited
// through the metadata API), add-ons and conversions, a CDN URL builder for images, content_info
// and appdata.
import { api } from './api.js';
import { add, copyButton, errorLine, formatSize, formatTime, h, show, table } from './dom.js';
import { cdnUrl } from './files.js';
import { preview } from './preview.js';
import { processing } from './processing.js';
import { urlBuilder } from './url-builder.js';

const enc = encodeURIComponent;

export async function filePage(view, uuid, session) {
  if (!/^[0-9a-f-]{36}$/.test(uuid)) throw new Error('Not a file id.');
  const file = await api('GET', `/files/${uuid}/?include=appdata`);
  const status = h('div', { id: 'status' });
  const reload = () => {
    show(view);
    return filePage(view, uuid, session);
  };
  const act = async (fn) => {
    try {
      await fn();
      await reload();
    } catch (err) {
      show(status, errorLine(err));
    }
  };

  add(view,
    h('p', {}, h('a', { href: '#/files' }, '← Files')),
    h('h1', { id: 'file-name' }, file.original_filename || file.uuid),
    h('div', { class: 'actions', id: 'file-actions' },
      !file.datetime_removed ? h('a', { class: 'button', id: 'download', href: cdnUrl(session, `/${uuid}/-/inline/no/`), download: file.original_filename || uuid }, 'Download') : null,
      file.original_file_url ? copyButton('Copy CDN URL', file.original_file_url, { id: 'copy-url' }) : null,
      copyButton('Copy UUID', file.uuid, { id: 'copy-uuid' }),
    ),
    status,
    file.is_image ? null : preview(file, session),
    table(['Field', 'Value'], [
      ['UUID', file.uuid],
      ['Size', `${formatSize(file.size)} (${file.size} bytes)`],
      ['MIME type', file.mime_type],
      ['Uploaded', formatTime(file.datetime_uploaded)],
      ['Stored', formatTime(file.datetime_stored) || 'no'],
      ['Removed', formatTime(file.datetime_removed) || 'no'],
      ['CDN URL', file.original_file_url ? h('a', { href: file.original_file_url, target: '_blank', rel: 'noopener' }, file.original_file_url) : ''],
    ].map(([k, v]) => h('tr', {}, h('th', {}, k), h('td', {}, v)))),
    h('div', { class: 'actions' },
      !file.datetime_stored && !file.datetime_removed ? h('button', { type: 'button', id: 'store', onclick: () => act(() => api('PUT', `/files/${uuid}/storage/`)) }, 'Store') : null,
      !file.datetime_removed ? h('button', { type: 'button', id: 'remove', class: 'danger', onclick: () => confirm('Remove this file?') && act(() => api('DELETE', `/files/${uuid}/storage/`)) }, 'Remove') : null,
    ),
    tagsEditor(file, act),
    metadataEditor(file, act),
    processing(file, reload),
    file.is_image && !file.datetime_removed ? urlBuilder(file, session) : null,
    h('h2', {}, 'content_info'),
    h('pre', { id: 'content-info' }, JSON.stringify(file.content_info ?? null, null, 2)),
    h('h2', {}, 'appdata'),
    h('pre', { id: 'appdata' }, JSON.stringify(file.appdata ?? null, null, 2)),
  );
}

function tagsEditor(file, act) {
  const input = h('input', { id: 'tags', value: (file.tags ?? []).join(', '), placeholder: 'tag, another tag' });
  const form = h('form', { class: 'inline' }, input, h('button', { type: 'submit' }, 'Save tags'));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const tags = input.value.split(',').map((t) => t.trim()).filter(Boolean);
    act(() => api('PUT', `/files/${file.uuid}/tags/`, { tags }));
  });
  return h('div', {}, h('h2', {}, 'Tags'), form);
}

function metadataEditor(file, act) {
  const removed = Boolean(file.datetime_removed);
  const rows = Object.entries(file.metadata ?? {}).map(([key, value]) => {
    const input = h('input', { value, 'data-key': key, disabled: removed });
    return h('tr', { 'data-key': key },
      h('th', {}, key),
      h('td', {}, input),
      h('td', {},
        h('button', { type: 'button', class: 'save-meta', disabled: removed, onclick: () => act(() => api('PUT', `/files/${file.uuid}/metadata/${enc(key)}/`, input.value)) }, 'Save'),
        h('button', { type: 'button', class: 'danger', disabled: removed, onclick: () => act(() => api('DELETE', `/files/${file.uuid}/metadata/${enc(key)}/`)) }, 'Delete'),
      ),
    );
  });
  const key = h('input', { id: 'meta-key', placeholder: 'key', pattern: '[A-Za-z0-9_.:\\-]{1,64}' });
  const value = h('input', { id: 'meta-value', placeholder: 'value' });
  const add = h('form', { class: 'inline', id: 'meta-add' }, key, value, h('button', { type: 'submit', disabled: removed }, 'Add'));
  add.addEventListener('submit', (e) => {
    e.preventDefault();
    act(() => api('PUT', `/files/${file.uuid}/metadata/${enc(key.value.trim())}/`, value.value));
  });
  return h('div', { id: 'metadata' }, h('h2', {}, 'Metadata'), rows.length ? table(['Key', 'Value', ''], rows) : h('p', { class: 'muted' }, 'No metadata.'), add);
}

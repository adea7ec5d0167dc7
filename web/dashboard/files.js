// The files list: CDN thumbnails, filters (state, type), a search box and keyset pages, all
// through the search API (POST /files/search/, docs/files.md).
import { api, pathOf } from './api.js';
import { errorLine, formatSize, formatTime, h, show, table } from './dom.js';

const PAGE_SIZE = 20;

const STATES = {
  live: { label: 'All (not removed)', cond: { removed: false } },
  stored: { label: 'Stored', cond: { stored: true } },
  unstored: { label: 'Not stored', cond: { stored: false } },
  removed: { label: 'Removed', cond: { removed: true } },
};
const TYPES = {
  any: { label: 'Any type', cond: {} },
  image: { label: 'Images', cond: { is_image: true } },
  other: { label: 'Other files', cond: { is_image: false } },
};

/** A CDN URL of the project; with signed CDN URLs, it carries the session's token. */
export function cdnUrl(session, path) {
  const url = `${session.cdn_base}${path}`;
  return session.cdn_token ? `${url}?token=${session.cdn_token.token}` : url;
}

/** A thumbnail from the CDN for a live image; a label with the extension otherwise. */
export function thumbnail(file, session, size = 96) {
  if (file.is_image && !file.datetime_removed) {
    return h('img', { class: 'thumb', alt: '', loading: 'lazy', src: cdnUrl(session, `/${file.uuid}/-/preview/${size}x${size}/`) });
  }
  const ext = (file.original_filename || '').split('.').pop().slice(0, 5) || 'file';
  return h('span', { class: 'thumb placeholder' }, ext);
}

export async function filesPage(view, session) {
  const state = h('select', { id: 'filter-state' }, Object.entries(STATES).map(([k, v]) => h('option', { value: k }, v.label)));
  const type = h('select', { id: 'filter-type' }, Object.entries(TYPES).map(([k, v]) => h('option', { value: k }, v.label)));
  const query = h('input', { id: 'search', type: 'search', placeholder: 'Filename, type or metadata (4+ characters)' });
  const results = h('div', { id: 'files' });
  const hint = h('span', { class: 'muted', id: 'search-hint' });
  const form = h('form', { class: 'filters' }, query, state, type, h('button', { type: 'submit' }, 'Search'), hint);
  view.append(h('h1', {}, 'Files'), form, results);

  // Pages already seen, so "Previous" goes back without an API `previous` link.
  let history = [];
  const conditions = () => {
    const c = { ...STATES[state.value].cond, ...TYPES[type.value].cond };
    const q = query.value.trim();
    // The search API needs 4+ characters; a shorter text would be a 400, so it is left out and said so.
    if (q.length >= 4) c.query = q;
    show(hint, q.length > 0 && q.length < 4 ? 'Search needs 4 or more characters: showing all.' : '');
    return c;
  };
  const load = async (path) => {
    const body = conditions();
    show(results, h('p', { class: 'muted' }, 'Loading…'));
    try {
      const page = await api('POST', path, body);
      render(page, path);
    } catch (err) {
      show(results, errorLine(err));
    }
  };
  const render = (page, path) => {
    const rows = page.results.map((f) => h('tr', { 'data-uuid': f.uuid },
      h('td', {}, thumbnail(f, session)),
      h('td', {}, h('a', { href: `#/files/${f.uuid}`, class: 'filename' }, f.original_filename || f.uuid)),
      h('td', {}, formatSize(f.size)),
      h('td', {}, f.mime_type || ''),
      h('td', {}, formatTime(f.datetime_uploaded)),
      h('td', {}, f.datetime_removed ? 'removed' : f.datetime_stored ? 'stored' : 'not stored'),
    ));
    const prev = h('button', { type: 'button', disabled: history.length === 0, onclick: () => load(history.pop()) }, 'Previous');
    const next = h('button', { type: 'button', disabled: !page.next, onclick: () => { history.push(path); load(pathOf(page.next)); } }, 'Next');
    show(results,
      h('p', { class: 'muted', id: 'total' }, `${page.total} file${page.total === 1 ? '' : 's'}`),
      rows.length ? table(['', 'Name', 'Size', 'Type', 'Uploaded', 'State'], rows) : h('p', {}, 'No files match.'),
      h('div', { class: 'pager' }, prev, next),
    );
  };
  const first = () => {
    history = [];
    load(`/files/search/?limit=${PAGE_SIZE}`);
  };
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    first();
  });
  state.addEventListener('change', first);
  type.addEventListener('change', first);
  first();
}

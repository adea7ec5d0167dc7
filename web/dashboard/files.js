// The files list: the project's usage, CDN thumbnails, filters (state, type), a search box, sorting
// by a column, selecting files to store or remove together, and keyset pages, all through the
// search API (POST /files/search/, docs/files.md) and the batch storage API.
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
/** Columns the search API sorts by (its `sort` keys). */
const SORTABLE = { Name: 'original_filename', Size: 'size', Uploaded: 'datetime_uploaded' };

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

/**
 * The search conditions for the text typed. The API's text search needs 4 or more characters (a
 * trigram index); a shorter word is looked for as a file extension (`pdf` finds `….pdf`), the
 * usual reason to type one. One or two characters are too short for either.
 */
export function textCondition(text) {
  const q = text.trim();
  if (q.length === 0) return { cond: {}, hint: '' };
  if (q.length >= 4) return { cond: { query: q }, hint: '' };
  if (q.length === 3 && !q.startsWith('.')) return { cond: { query: `.${q}` }, hint: `Three letters: looking for the extension “.${q}”.` };
  return { cond: {}, hint: 'Type 3 or more characters to search: showing all.' };
}

export async function filesPage(view, session) {
  const state = h('select', { id: 'filter-state' }, Object.entries(STATES).map(([k, v]) => h('option', { value: k }, v.label)));
  const type = h('select', { id: 'filter-type' }, Object.entries(TYPES).map(([k, v]) => h('option', { value: k }, v.label)));
  const query = h('input', { id: 'search', type: 'search', placeholder: 'Filename, extension, type or metadata' });
  const results = h('div', { id: 'files' });
  const hint = h('span', { class: 'muted', id: 'search-hint' });
  const usage = h('div', { class: 'usage', id: 'usage' });
  const form = h('form', { class: 'filters' }, query, state, type, h('button', { type: 'submit' }, 'Search'), hint);
  view.append(h('h1', {}, 'Files'), usage, form, results);
  showUsage(usage);

  let sort = '-datetime_uploaded';
  // Pages already seen, so "Previous" goes back without an API `previous` link.
  let history = [];
  let current = '';
  const selected = new Set();
  const conditions = () => {
    const text = textCondition(query.value);
    show(hint, text.hint);
    return { ...STATES[state.value].cond, ...TYPES[type.value].cond, ...text.cond, sort: [sort] };
  };
  const load = async (path) => {
    current = path;
    selected.clear();
    show(results, h('p', { class: 'muted' }, 'Loading…'));
    try {
      render(await api('POST', path, conditions()), path);
    } catch (err) {
      show(results, errorLine(err));
    }
  };
  const first = () => {
    history = [];
    load(`/files/search/?limit=${PAGE_SIZE}`);
  };
  const batch = async (method, what) => {
    const ids = [...selected];
    if (ids.length === 0 || (method === 'DELETE' && !confirm(`Remove ${ids.length} file${ids.length === 1 ? '' : 's'}?`))) return;
    try {
      const answer = await api(method, '/files/storage/', ids);
      const problems = Object.entries(answer.problems ?? {});
      await load(current);
      showUsage(usage);
      if (problems.length) results.prepend(errorLine(`${what}: ${problems.map(([k, v]) => `${k}: ${v}`).join('; ')}`));
    } catch (err) {
      results.prepend(errorLine(err));
    }
  };
  const render = (page, path) => {
    const count = h('span', { id: 'selected-count', class: 'muted' }, 'None selected');
    const store = h('button', { type: 'button', id: 'store-selected', disabled: true, onclick: () => batch('PUT', 'Store') }, 'Store selected');
    const remove = h('button', { type: 'button', id: 'remove-selected', class: 'danger', disabled: true, onclick: () => batch('DELETE', 'Remove') }, 'Remove selected');
    const boxes = [];
    const changed = () => {
      show(count, selected.size ? `${selected.size} selected` : 'None selected');
      store.disabled = remove.disabled = selected.size === 0;
      all.checked = boxes.length > 0 && boxes.every((b) => b.checked);
    };
    const all = h('input', { type: 'checkbox', id: 'select-all', title: 'Select this page', onchange: () => {
      for (const b of boxes) b.checked = all.checked;
      for (const f of page.results) (all.checked ? selected.add(f.uuid) : selected.delete(f.uuid));
      changed();
    } });
    const rows = page.results.map((f) => {
      const box = h('input', { type: 'checkbox', class: 'select', value: f.uuid, onchange: () => {
        (box.checked ? selected.add(f.uuid) : selected.delete(f.uuid));
        changed();
      } });
      boxes.push(box);
      return h('tr', { 'data-uuid': f.uuid },
        h('td', {}, box),
        h('td', {}, thumbnail(f, session)),
        h('td', {}, h('a', { href: `#/files/${f.uuid}`, class: 'filename' }, f.original_filename || f.uuid)),
        h('td', {}, formatSize(f.size)),
        h('td', {}, f.mime_type || ''),
        h('td', {}, formatTime(f.datetime_uploaded)),
        h('td', { class: 'state' }, f.datetime_removed ? 'removed' : f.datetime_stored ? 'stored' : 'not stored'),
      );
    });
    const prev = h('button', { type: 'button', disabled: history.length === 0, onclick: () => load(history.pop()) }, 'Previous');
    const next = h('button', { type: 'button', disabled: !page.next, onclick: () => { history.push(path); load(pathOf(page.next)); } }, 'Next');
    const heading = (label) => {
      const key = SORTABLE[label];
      if (!key) return label;
      const dir = sort === key ? 'ascending' : sort === `-${key}` ? 'descending' : null;
      return h('span', { class: 'sort', 'data-sort': key, 'aria-sort': dir, role: 'button', tabindex: 0, onclick: () => {
        sort = sort === key ? `-${key}` : key;
        first();
      } }, label, dir ? (dir === 'ascending' ? ' ▲' : ' ▼') : '');
    };
    show(results,
      h('p', { class: 'muted', id: 'total' }, `${page.total} file${page.total === 1 ? '' : 's'}`),
      h('div', { class: 'selection' }, count, store, remove),
      rows.length ? table([all, '', ...['Name', 'Size', 'Type', 'Uploaded', 'State'].map(heading)], rows) : h('p', {}, 'No files match.'),
      h('div', { class: 'pager' }, prev, next),
    );
  };
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    first();
  });
  state.addEventListener('change', first);
  type.addEventListener('change', first);
  first();
}

/** Files and bytes of the project, stored and not (GET /dashboard/api/usage). */
async function showUsage(into) {
  try {
    const u = await api('GET', '/dashboard/api/usage');
    const item = (id, label, files, bytes) => h('span', { id }, label, ' ', h('b', {}, String(files)), bytes === undefined ? '' : ` (${formatSize(bytes)})`);
    show(into,
      item('usage-total', 'Files', u.stored.files + u.unstored.files, u.stored.bytes + u.unstored.bytes),
      item('usage-stored', 'Stored', u.stored.files, u.stored.bytes),
      item('usage-unstored', 'Not stored', u.unstored.files, u.unstored.bytes),
      item('usage-removed', 'Removed', u.removed.files),
    );
  } catch (err) {
    show(into, errorLine(err));
  }
}

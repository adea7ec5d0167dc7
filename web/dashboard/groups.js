// Groups of the project (GET /groups/), newest first, each opening onto its files, with a zip of
// them from the CDN and a delete (the group only: its files stay).
import { api, pathOf } from './api.js';
import { errorLine, formatTime, h, show, table } from './dom.js';
import { cdnUrl, thumbnail } from './files.js';

export async function groupsPage(view, session) {
  const results = h('div', { id: 'groups' });
  view.append(h('h1', {}, 'Groups'), results);
  let history = [];
  const load = async (path) => {
    try {
      const page = await api('GET', path);
      const rows = page.results.map((g) => {
        const files = h('div', { class: 'group-files' });
        const open = h('button', { type: 'button', class: 'show-files', onclick: () => showFiles(g.id, files, session) }, 'Files');
        const remove = h('button', { type: 'button', class: 'danger delete-group', onclick: () => deleteGroup(g.id, () => load(path), files) }, 'Delete');
        // The group's files as one zip from the CDN (docs/groups.md), named after the group.
        const zip = h('a', { class: 'zip', href: cdnUrl(session, `/${g.id}/archive/zip/${g.id.split('~')[0]}.zip`) }, 'Zip');
        return h('tr', { 'data-group': g.id },
          h('td', {}, g.id),
          h('td', {}, formatTime(g.datetime_created)),
          h('td', {}, String(g.files_count)),
          h('td', {}, g.cdn_url ? h('a', { href: g.cdn_url, target: '_blank', rel: 'noopener' }, 'CDN') : '', ' ', zip),
          h('td', {}, open, ' ', remove, files),
        );
      });
      show(results,
        h('p', { class: 'muted' }, `${page.total ?? rows.length} group${page.total === 1 ? '' : 's'}`),
        rows.length ? table(['Group', 'Created', 'Files', '', ''], rows) : h('p', {}, 'No groups yet.'),
        h('div', { class: 'pager' },
          h('button', { type: 'button', disabled: history.length === 0, onclick: () => load(history.pop()) }, 'Previous'),
          h('button', { type: 'button', disabled: !page.next, onclick: () => { history.push(path); load(pathOf(page.next)); } }, 'Next'),
        ),
      );
    } catch (err) {
      show(results, errorLine(err));
    }
  };
  history = [];
  await load('/groups/?limit=20&ordering=-datetime_created');
}

async function showFiles(id, into, session) {
  try {
    const group = await api('GET', `/groups/${encodeURIComponent(id)}/`);
    show(into, (group.files ?? []).map((f) => (f ? h('a', { href: `#/files/${f.uuid}`, title: f.original_filename ?? '' }, thumbnail(f, session, 64)) : h('span', { class: 'thumb placeholder' }, 'gone'))));
  } catch (err) {
    show(into, errorLine(err));
  }
}

async function deleteGroup(id, reload, into) {
  if (!confirm('Delete this group? Its files stay.')) return;
  try {
    await api('DELETE', `/groups/${encodeURIComponent(id)}/`);
    await reload();
  } catch (err) {
    show(into, errorLine(err));
  }
}

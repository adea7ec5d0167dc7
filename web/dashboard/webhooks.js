// Webhook subscriptions: list, create, enable/disable, delete, and each one's delivery log.
import { api } from './api.js';
import { errorLine, formatTime, h, show, table } from './dom.js';

const EVENTS = ['file.uploaded', 'file.stored', 'file.deleted', 'file.info_updated', 'file.infected'];

export async function webhooksPage(view) {
  const list = h('div', { id: 'webhooks' });
  const status = h('div', {});
  const target = h('input', { id: 'hook-target', type: 'url', required: true, placeholder: 'https://example.com/hook', class: 'wide' });
  const event = h('select', { id: 'hook-event' }, EVENTS.map((e) => h('option', { value: e }, e)));
  const secret = h('input', { id: 'hook-secret', placeholder: 'signing secret (optional)' });
  const form = h('form', { class: 'inline', id: 'hook-create' }, target, event, secret, h('button', { type: 'submit' }, 'Subscribe'));
  view.append(h('h1', {}, 'Webhooks'), form, status, list);

  const refresh = async () => {
    const hooks = await api('GET', '/webhooks/');
    // Each subscription's delivery log opens in a full-width row of its own under it.
    const rows = hooks.flatMap((w) => {
      const log = h('div', { class: 'deliveries' });
      const logRow = h('tr', { class: 'deliveries-row', 'data-deliveries-of': w.id, hidden: true }, h('td', { colspan: 4 }, log));
      const toggleLog = () => {
        logRow.hidden = !logRow.hidden;
        if (!logRow.hidden) deliveries(w.id, log);
      };
      return [
        h('tr', { 'data-webhook': w.id },
          h('td', {}, w.target_url),
          h('td', {}, w.event),
          h('td', { class: 'state' }, w.is_active ? 'active' : 'disabled'),
          h('td', {},
            h('button', { type: 'button', class: 'toggle', onclick: () => act(() => api('PUT', `/webhooks/${w.id}/`, { is_active: !w.is_active })) }, w.is_active ? 'Disable' : 'Enable'),
            ' ',
            h('button', { type: 'button', class: 'show-deliveries', onclick: toggleLog }, 'Deliveries'),
            ' ',
            h('button', { type: 'button', class: 'danger', onclick: () => confirm('Delete this webhook?') && act(() => api('DELETE', `/webhooks/${w.id}/`)) }, 'Delete'),
          ),
        ),
        logRow,
      ];
    });
    show(list, rows.length ? table(['Target', 'Event', 'State', ''], rows) : h('p', {}, 'No webhooks.'));
  };
  const act = async (fn) => {
    try {
      await fn();
      show(status);
      await refresh();
    } catch (err) {
      show(status, errorLine(err));
    }
  };
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const body = { target_url: target.value.trim(), event: event.value, is_active: true };
    if (secret.value) body.signing_secret = secret.value;
    act(() => api('POST', '/webhooks/', body));
  });
  await refresh();
}

async function deliveries(id, into) {
  try {
    const page = await api('GET', `/webhooks/${id}/deliveries/?limit=20`);
    const rows = page.results.map((d) => h('tr', { class: d.success ? 'ok' : 'failed' },
      h('td', {}, formatTime(d.started)),
      h('td', {}, d.event),
      h('td', {}, String(d.attempt)),
      h('td', { class: 'status' }, d.status === null ? 'no answer' : String(d.status)),
      h('td', {}, `${d.duration_ms} ms`),
      h('td', {}, d.error ?? ''),
    ));
    show(into, h('p', { class: 'muted' }, `${page.total} deliver${page.total === 1 ? 'y' : 'ies'} (newest first${page.total > 20 ? ', the last 20' : ''})`),
      rows.length ? table(['Started', 'Event', 'Attempt', 'HTTP status', 'Took', 'Error'], rows) : null);
  } catch (err) {
    show(into, errorLine(err));
  }
}

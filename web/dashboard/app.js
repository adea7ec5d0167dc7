// The dashboard's shell: who is signed in, the sign-in form, and the hash router (#/files,
// #/files/<uuid>, #/groups, #/webhooks, #/upload).
import { api } from './api.js';
import { errorLine, h, show } from './dom.js';
import { filesPage } from './files.js';
import { filePage } from './file.js';
import { groupsPage } from './groups.js';
import { webhooksPage } from './webhooks.js';
import { uploadPage } from './upload.js';

const app = document.getElementById('app');
const top = document.getElementById('top');
let session = null;

async function start() {
  try {
    const who = await api('GET', '/dashboard/api/session');
    session = who.signed_in ? who : null;
  } catch {
    session = null;
  }
  if (!session) return showSignIn();
  top.hidden = false;
  show(document.getElementById('project-name'), `${session.project.name} (${session.project.pub_key})`);
  if (!location.hash) location.hash = '#/files';
  else route();
}

function showSignIn(message) {
  top.hidden = true;
  const status = h('div', {});
  const pub = h('input', { name: 'public_key', id: 'public_key', required: true, autocomplete: 'username' });
  const secret = h('input', { name: 'secret_key', id: 'secret_key', type: 'password', autocomplete: 'current-password' });
  const admin = h('input', { name: 'admin_token', id: 'admin_token', type: 'password', autocomplete: 'off' });
  const form = h('form', { id: 'sign-in', class: 'card' },
    h('h1', {}, 'Sign in'),
    h('label', {}, 'Public key', pub),
    h('label', {}, 'Secret key', secret),
    h('label', {}, 'or admin token', admin),
    h('button', { type: 'submit' }, 'Sign in'),
    status,
  );
  if (message) show(status, errorLine(message));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const body = { public_key: pub.value.trim() };
    if (admin.value) body.admin_token = admin.value;
    else body.secret_key = secret.value;
    try {
      await api('POST', '/dashboard/api/login', body);
      location.hash = '#/files';
      await start();
    } catch (err) {
      show(status, errorLine(err));
    }
  });
  show(app, form);
}

/** The session again when its CDN token is about to expire (pages build thumbnail URLs with it). */
async function freshSession() {
  const token = session?.cdn_token;
  if (token && Date.parse(token.expires_at) - Date.now() < 120_000) {
    const who = await api('GET', '/dashboard/api/session').catch(() => null);
    session = who?.signed_in ? who : null;
  }
  return session;
}

async function route() {
  if (!(await freshSession())) return showSignIn();
  const parts = location.hash.replace(/^#\/?/, '').split('/').filter(Boolean);
  for (const a of top.querySelectorAll('nav a')) a.classList.toggle('active', a.getAttribute('href') === `#/${parts[0] ?? ''}`);
  const [page, id] = parts;
  const view = h('section', { class: 'page' });
  show(app, view);
  const pages = {
    files: () => (id ? filePage(view, id, session) : filesPage(view, session)),
    groups: () => groupsPage(view, session),
    webhooks: () => webhooksPage(view),
    upload: () => uploadPage(view, session),
  };
  (pages[page] ?? pages.files)().catch((err) => view.append(errorLine(err)));
}

document.getElementById('logout').addEventListener('click', async () => {
  await api('POST', '/dashboard/api/logout').catch(() => undefined);
  session = null;
  location.hash = '';
  showSignIn();
});
window.addEventListener('hashchange', route);
window.addEventListener('stowage:signed-out', () => {
  session = null;
  showSignIn('The session ended: sign in again.');
});
start();

// Uploads into the project through the official upload widget (@uploadcare/file-uploader), served
// by this server from its npm package, pointed at this Stowage's Upload API and CDN.
import { api } from './api.js';
import { h } from './dom.js';

let widgetLoaded = null;

function loadWidget() {
  widgetLoaded ??= new Promise((resolve, reject) => {
    document.head.append(h('link', { rel: 'stylesheet', href: '/dashboard/uc/uc-file-uploader-regular.min.css' }));
    const script = h('script', { src: '/dashboard/uc/file-uploader.iife.min.js' });
    script.addEventListener('load', () => {
      window.UC.defineComponents(window.UC);
      resolve();
    });
    script.addEventListener('error', () => reject(new Error('The upload widget could not be loaded.')));
    document.head.append(script);
  });
  return widgetLoaded;
}

export async function uploadPage(view, session) {
  view.append(h('h1', {}, 'Upload'));
  if (!session.widget) {
    view.append(h('p', { class: 'error' }, 'The upload widget (@uploadcare/file-uploader) is not installed on this server.'));
    return;
  }
  await loadWidget();
  const config = h('uc-config', { 'ctx-name': 'dashboard' });
  config.pubkey = session.project.pub_key;
  config.baseUrl = session.upload_base;
  config.cdnCname = session.cdn_base;
  // Signed uploads: the server signs for the session (the secret key never reaches the page).
  if (session.project.signed_uploads) {
    config.secureUploadsSignatureResolver = async () => {
      const s = await api('GET', '/dashboard/api/upload-signature');
      return { secureSignature: s.secure_signature, secureExpire: String(s.secure_expire) };
    };
  }
  // Files from this computer, a URL (fetched by the Upload API's /from_url/) and the camera. The
  // widget's other sources (Dropbox, Google Drive, …) go through the hosted service's social
  // backend, which a self-hosted server does not have.
  config.sourceList = 'local, url, camera';
  // The widget reports usage to the hosted service unless told not to; a self-hosted dashboard does not.
  config.qualityInsights = false;
  const uploaded = h('ul', { id: 'uploaded' });
  const ctx = h('uc-upload-ctx-provider', { 'ctx-name': 'dashboard', id: 'upload-ctx' });
  ctx.addEventListener('file-upload-success', (e) => {
    const { uuid, name } = e.detail;
    uploaded.append(h('li', {}, h('a', { href: `#/files/${uuid}` }, name || uuid)));
  });
  ctx.addEventListener('file-upload-failed', (e) => {
    const messages = (e.detail.errors || []).map((x) => String(x.message)).join('; ');
    uploaded.append(h('li', { class: 'error' }, `${e.detail.name || 'file'}: ${messages || 'failed'}`));
  });
  view.append(config, h('uc-file-uploader-regular', { 'ctx-name': 'dashboard' }), ctx, h('h2', {}, 'Uploaded'), uploaded);
}

// Running add-ons and conversions on one file from its page, and showing what they made: the
// add-on's appdata (the page reloads it) or the new file it or a conversion made (a link to it).
import { api } from './api.js';
import { errorLine, h, show } from './dom.js';
import { waitFor } from './preview.js';

const ADDONS = [
  { name: 'uc_clamav_virus_scan', label: 'Virus scan (ClamAV)', images: false },
  { name: 'aws_rekognition_detect_labels', label: 'Detect labels', images: true },
  { name: 'aws_rekognition_detect_moderation_labels', label: 'Detect moderation labels', images: true },
  { name: 'remove_bg', label: 'Remove background', images: true },
];
const VIDEO_FORMATS = ['mp4', 'webm', 'ogg'];

/** The "Process" block of a live file; `reload` re-renders the page (fresh appdata). */
export function processing(file, reload) {
  if (file.datetime_removed) return null;
  const results = h('ul', { id: 'process-results' });
  const addon = h('select', { id: 'addon-name' }, ADDONS.filter((a) => file.is_image || !a.images).map((a) => h('option', { value: a.name }, a.label)));
  const run = h('button', { type: 'button', id: 'addon-run' }, 'Run add-on');
  run.addEventListener('click', () => track(results, `${addon.selectedOptions[0].textContent}`, () => runAddon(file, addon.value), reload));
  const convert = h('div', { class: 'inline', id: 'convert' });
  conversionTargets(file).then((targets) => {
    if (!targets) return;
    const format = h('select', { id: 'convert-format' }, targets.formats.map((f) => h('option', { value: f }, f)));
    const go = h('button', { type: 'button', id: 'convert-run' }, 'Convert');
    go.addEventListener('click', () => track(results, `Conversion to ${format.value}`, () => runConversion(file, targets.kind, format.value), null));
    show(convert, h('span', {}, `Convert this ${targets.kind} to `), format, go);
  });
  return h('div', { id: 'processing' }, h('h2', {}, 'Process'), h('div', { class: 'inline' }, addon, run), convert, results);
}

/** One run's line: its label, then its outcome (and a link to the file it made). */
async function track(list, label, start, reload) {
  const line = h('li', { class: 'running' }, `${label}: running…`);
  list.prepend(line);
  try {
    const outcome = await start();
    line.className = 'done';
    show(line, `${label}: ${outcome.text}`, outcome.uuid ? [' ', h('a', { href: `#/files/${outcome.uuid}`, class: 'result-file' }, outcome.uuid)] : null);
    if (reload && outcome.reload) setTimeout(reload, 1500);
  } catch (err) {
    line.className = 'failed';
    show(line, `${label}: `, errorLine(err));
  }
}

async function runAddon(file, name) {
  const { request_id: id } = await api('POST', `/addons/${name}/execute/`, { target: file.uuid });
  const state = await waitFor(() => api('GET', `/addons/${name}/execute/status/?request_id=${encodeURIComponent(id)}`));
  if (state.status !== 'done') throw new Error(state.error ? `${state.status}: ${state.error}` : state.status);
  return { text: 'done, see appdata below', uuid: state.result?.file_id ?? null, reload: true };
}

/** The conversion targets the file has: a document's from the API, a video's fixed list; null for neither. */
async function conversionTargets(file) {
  if ((file.mime_type || '').startsWith('video/')) return { kind: 'video', formats: VIDEO_FORMATS };
  if (file.is_image) return null;
  const info = await api('GET', `/convert/document/${file.uuid}/`).catch(() => null);
  const formats = (info?.format?.conversion_formats ?? []).map((f) => f.name);
  return formats.length ? { kind: 'document', formats } : null;
}

async function runConversion(file, kind, format) {
  const answer = await api('POST', `/convert/${kind}/`, { paths: [`${file.uuid}/${kind}/-/format/${format}/`], store: '1' });
  const job = answer.result?.[0];
  if (!job) throw new Error(Object.values(answer.problems ?? {})[0] ?? 'Refused.');
  const state = await waitFor(() => api('GET', `/convert/${kind}/status/${job.token}/`));
  if (state.status !== 'finished') throw new Error(`${state.status}${state.error ? `: ${state.error}` : ''}`);
  return { text: 'finished, the new file:', uuid: state.result.uuid, reload: false };
}

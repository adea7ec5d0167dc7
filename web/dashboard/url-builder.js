// Builds a CDN URL from a few image operations (docs/images.md) and shows the result live.
import { copyButton, h, show } from './dom.js';
import { cdnUrl } from './files.js';

const FORMATS = ['auto', 'jpeg', 'png', 'webp'];
const QUALITIES = ['', 'smart', 'better', 'best', 'lighter', 'lightest'];
const ROTATIONS = ['0', '90', '180', '270'];

export function urlBuilder(file, session) {
  const width = h('input', { id: 'op-width', type: 'number', min: 1, max: 3000, value: 400 });
  const height = h('input', { id: 'op-height', type: 'number', min: 1, max: 3000, value: 400 });
  const format = h('select', { id: 'op-format' }, FORMATS.map((f) => h('option', { value: f }, f)));
  const quality = h('select', { id: 'op-quality' }, QUALITIES.map((q) => h('option', { value: q }, q || 'default quality')));
  const rotate = h('select', { id: 'op-rotate' }, ROTATIONS.map((r) => h('option', { value: r }, `rotate ${r}°`)));
  const gray = h('input', { id: 'op-grayscale', type: 'checkbox' });
  const mirror = h('input', { id: 'op-mirror', type: 'checkbox' });
  // The whole URL, wrapped over as many lines as it takes (an input would cut it off).
  const url = h('code', { id: 'cdn-url', class: 'url' });
  const copy = copyButton('Copy URL', '', { id: 'copy-built-url' });
  const size = h('span', { id: 'preview-size', class: 'muted' });
  const preview = h('img', { id: 'cdn-preview', alt: 'preview' });

  const build = () => {
    const ops = [];
    const w = clamp(width.value);
    const hh = clamp(height.value);
    if (w && hh) ops.push(`preview/${w}x${hh}`);
    if (rotate.value !== '0') ops.push(`rotate/${rotate.value}`);
    if (mirror.checked) ops.push('mirror');
    if (gray.checked) ops.push('grayscale');
    if (format.value !== 'auto') ops.push(`format/${format.value}`);
    if (quality.value) ops.push(`quality/${quality.value}`);
    return cdnUrl(session, `/${file.uuid}/${ops.map((o) => `-/${o}/`).join('')}`);
  };
  const update = () => {
    const next = build();
    show(url, next);
    copy.dataset.copy = next;
    if (preview.getAttribute('src') !== next) {
      show(size, 'loading…');
      preview.src = next;
    }
  };
  preview.addEventListener('load', () => show(size, `${preview.naturalWidth}×${preview.naturalHeight}`));
  preview.addEventListener('error', () => show(size, 'the CDN refused these operations'));
  for (const el of [width, height, format, quality, rotate, gray, mirror]) el.addEventListener('change', update);
  update();

  return h('div', { id: 'url-builder' },
    h('h2', {}, 'CDN URL builder'),
    h('div', { class: 'ops' },
      h('label', {}, 'preview width ', width),
      h('label', {}, 'height ', height),
      format, quality, rotate,
      h('label', {}, gray, ' grayscale'),
      h('label', {}, mirror, ' mirror'),
    ),
    h('div', { class: 'url-line' }, url, copy),
    h('div', { class: 'preview' }, preview, size),
  );
}

function clamp(v) {
  const n = Math.round(Number(v));
  return Number.isFinite(n) && n >= 1 ? Math.min(n, 3000) : 0;
}

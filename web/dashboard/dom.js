// Building DOM without HTML strings: every text given here becomes a text node, so a filename or a
// metadata value is shown as typed and never parsed as markup.

/**
 * h('a', { href: '#/x', class: 'c', onclick: fn }, 'text', child, …): an element. Attributes
 * starting with "on" are listeners; `null`/`undefined`/`false` attributes and children are skipped.
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith('on')) el.addEventListener(name.slice(2), value);
    else if (name === 'value') el.value = value;
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  add(el, children);
  return el;
}

/**
 * Appends children, skipping `null`/`undefined`/`false` (Element.append would show them as the
 * text "null"): optional parts of a page are written `cond ? part : null`.
 */
export function add(el, ...children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces an element's content. */
export function show(el, ...children) {
  el.replaceChildren();
  add(el, children);
}

export function table(headings, rows) {
  return h('table', {}, h('thead', {}, h('tr', {}, headings.map((t) => h('th', {}, t)))), h('tbody', {}, rows));
}

/** An error line for a failed call (the API's `detail`, or each field's messages). */
export function errorLine(err) {
  return h('p', { class: 'error', role: 'alert' }, err instanceof Error ? err.message : String(err));
}

export function formatSize(bytes) {
  if (bytes === null || bytes === undefined) return '';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let n = bytes;
  let u = 0;
  while (n >= 1024 && u < units.length - 1) {
    n /= 1024;
    u++;
  }
  return `${u === 0 ? n : n.toFixed(1)} ${units[u]}`;
}

export function formatTime(iso) {
  return iso ? iso.replace('T', ' ').replace(/\.\d+Z$/, ' UTC') : '';
}

/**
 * A button that copies its `data-copy` (`text` at first; a page may change it) (the clipboard API where the page is a secure context: HTTPS or
 * loopback; a selected hidden field and execCommand elsewhere) and says "Copied".
 */
export function copyButton(label, text, attrs = {}) {
  const button = h('button', { type: 'button', class: 'copy', 'data-copy': text, ...attrs }, label);
  button.addEventListener('click', async () => {
    const value = button.dataset.copy ?? '';
    try {
      if (navigator.clipboard && window.isSecureContext) await navigator.clipboard.writeText(value);
      else copyBySelection(value);
      show(button, 'Copied');
    } catch {
      show(button, 'Copy failed');
    }
    setTimeout(() => show(button, label), 1500);
  });
  return button;
}

function copyBySelection(text) {
  const field = h('textarea', { readonly: true, style: 'position:fixed;top:-100px;opacity:0' }, text);
  document.body.append(field);
  field.select();
  const ok = document.execCommand('copy');
  field.remove();
  if (!ok) throw new Error('copy refused');
}

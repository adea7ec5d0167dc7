/**
 * The dashboard's static files, read once at start into a table by name: the pages and modules in
 * web/dashboard/ and the official upload widget's browser build from node_modules. A request names
 * an entry of the table, never a path, so nothing outside these folders can be served.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

export interface Asset {
  body: Buffer;
  contentType: string;
}

/** web/dashboard/ at the package root: two levels up from src/dashboard/ and from dist/dashboard/. */
const WEB_DIR = fileURLToPath(new URL('../../web/dashboard/', import.meta.url));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/** The widget files the upload page loads (the regular uploader: button, modal, sources). */
const WIDGET_FILES = ['file-uploader.iife.min.js', 'uc-file-uploader-regular.min.css'];

function readDir(dir: string, names: string[]): Map<string, Asset> {
  const out = new Map<string, Asset>();
  for (const name of names) {
    const type = TYPES[path.extname(name)];
    if (type) out.set(name, { body: fs.readFileSync(path.join(dir, name)), contentType: type });
  }
  return out;
}

export function loadPages(): Map<string, Asset> {
  return readDir(WEB_DIR, fs.readdirSync(WEB_DIR));
}

/** The widget's files, or an empty table when @uploadcare/file-uploader is not installed (the upload page says so). */
export function loadWidget(): Map<string, Asset> {
  let dir: string;
  try {
    dir = path.dirname(createRequire(import.meta.url).resolve('@uploadcare/file-uploader/web/file-uploader.iife.min.js'));
  } catch {
    return new Map();
  }
  return readDir(dir, WIDGET_FILES);
}

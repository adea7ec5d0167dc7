/**
 * The wire's `mime_type`: the type the client declared for a file, or its name's extension's type
 * when the declaration says nothing useful (wire-reference §1.3: `_mem.exe` answered
 * `application/x-msdownload` while `content_info.mime` said `text/plain`). It is a label the client
 * chose: nothing that decides how bytes are served or processed may read it; that is the sniffed
 * type (`content_info.mime`).
 */

/** Declarations that say nothing about the content: the extension decides, when it is known. */
const GENERIC = new Set(['application/octet-stream', 'binary/octet-stream', 'application/unknown', 'application/x-unknown', 'application/force-download']);

/**
 * A multipart file part without Content-Type is `text/plain` by RFC 7578 (and busboy reports it
 * so): such a declaration cannot be told from an explicit one, so a known extension wins over it.
 */
const WEAK = 'text/plain';

const FALLBACK = 'application/octet-stream';

/** RFC 9110 token characters, lower case; 127 per side is the registry's limit. */
const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/;

/**
 * Extension -> type for common files, values as in mime-db (the table behind the `mime-types`
 * package), except `.exe`, which the real service reports as `application/x-msdownload`.
 */
const BY_EXTENSION: Record<string, string> = {
  png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', jpe: 'image/jpeg', gif: 'image/gif', webp: 'image/webp',
  avif: 'image/avif', heic: 'image/heic', heif: 'image/heif', bmp: 'image/bmp', tif: 'image/tiff', tiff: 'image/tiff',
  ico: 'image/x-icon', svg: 'image/svg+xml', svgz: 'image/svg+xml', tga: 'image/x-tga', pcx: 'image/x-pcx',
  psd: 'image/vnd.adobe.photoshop', jxl: 'image/jxl', jp2: 'image/jp2',
  mp4: 'video/mp4', m4v: 'video/x-m4v', mov: 'video/quicktime', qt: 'video/quicktime', webm: 'video/webm',
  mkv: 'video/x-matroska', avi: 'video/x-msvideo', wmv: 'video/x-ms-wmv', flv: 'video/x-flv', mpeg: 'video/mpeg',
  mpg: 'video/mpeg', '3gp': 'video/3gpp', ogv: 'video/ogg',
  mp3: 'audio/mpeg', wav: 'audio/wav', ogg: 'audio/ogg', oga: 'audio/ogg', m4a: 'audio/mp4', aac: 'audio/x-aac',
  flac: 'audio/x-flac', weba: 'audio/webm', opus: 'audio/ogg', mid: 'audio/midi', midi: 'audio/midi',
  pdf: 'application/pdf', txt: 'text/plain', text: 'text/plain', log: 'text/plain', csv: 'text/csv',
  tsv: 'text/tab-separated-values', html: 'text/html', htm: 'text/html', xhtml: 'application/xhtml+xml',
  xml: 'application/xml', json: 'application/json', js: 'application/javascript', mjs: 'application/javascript',
  css: 'text/css', md: 'text/markdown', rtf: 'application/rtf', ics: 'text/calendar', vcf: 'text/x-vcard',
  yaml: 'text/yaml', yml: 'text/yaml',
  doc: 'application/msword', docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xls: 'application/vnd.ms-excel', xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  ppt: 'application/vnd.ms-powerpoint', pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  odt: 'application/vnd.oasis.opendocument.text', ods: 'application/vnd.oasis.opendocument.spreadsheet',
  odp: 'application/vnd.oasis.opendocument.presentation', epub: 'application/epub+zip',
  key: 'application/vnd.apple.keynote', numbers: 'application/vnd.apple.numbers', pages: 'application/vnd.apple.pages',
  ps: 'application/postscript', eps: 'application/postscript', ai: 'application/postscript',
  zip: 'application/zip', gz: 'application/gzip', tgz: 'application/gzip', tar: 'application/x-tar',
  '7z': 'application/x-7z-compressed', rar: 'application/vnd.rar', bz2: 'application/x-bzip2', xz: 'application/x-xz',
  exe: 'application/x-msdownload', dll: 'application/x-msdownload', msi: 'application/x-msdownload',
  apk: 'application/vnd.android.package-archive', dmg: 'application/x-apple-diskimage', iso: 'application/x-iso9660-image',
  deb: 'application/x-debian-package', rpm: 'application/x-redhat-package-manager', sh: 'application/x-sh',
  woff: 'font/woff', woff2: 'font/woff2', ttf: 'font/ttf', otf: 'font/otf', eot: 'application/vnd.ms-fontobject',
  wasm: 'application/wasm',
};

/** The media type of a Content-Type value (parameters dropped, lower case), or null when malformed. */
export function mediaTypeOf(contentType: string | null | undefined): string | null {
  const bare = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  return MEDIA_TYPE.test(bare) ? bare : null;
}

/** The type a file name's last extension stands for, or null. */
export function extensionType(filename: string | null | undefined): string | null {
  const base = (filename ?? '').split(/[\\/]/).pop() ?? '';
  const dot = base.lastIndexOf('.');
  if (dot <= 0) return null;
  return BY_EXTENSION[base.slice(dot + 1).toLowerCase()] ?? null;
}

/** `mime_type` of a new file from what the client declared and the file's name. */
export function declaredMimeType(declared: string | null | undefined, filename: string | null | undefined): string {
  const type = mediaTypeOf(declared);
  if (type !== null && !GENERIC.has(type) && type !== WEAK) return type;
  return extensionType(filename) ?? type ?? FALLBACK;
}

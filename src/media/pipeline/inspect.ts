/**
 * What a stored file is, decided from its bytes (never from what the client claimed): mime type by
 * magic numbers, then image facts for images. Reads only headers, so it is cheap for any size.
 */
import { fileTypeFromFile } from 'file-type';
import type { ContentInfo } from '../../core/file-record.js';
import { readImageInfo } from './image-info.js';
import { magicType } from './magic-numbers.js';
import { readHead } from './source.js';
import { probeVideo } from './video-probe.js';
import { MAX_INPUT_PIXELS } from '../limits.js';

export interface Inspection {
  mimeType: string;
  isImage: boolean;
  contentInfo: ContentInfo;
}

/** How much of the start of a file the type sniffing reads (an upload keeps these bytes as they pass). */
export const INSPECT_HEAD_BYTES = 64 * 1024;

/** `head`: the file's first min(size, INSPECT_HEAD_BYTES) bytes when the caller holds them already. */
export async function inspectFile(path: string, head?: Buffer): Promise<Inspection> {
  head ??= await readHead(path, INSPECT_HEAD_BYTES);
  let mimeType = await sniffMime(head);
  // A TIFF's directory may sit anywhere (ffmpeg and libtiff write it after the pixels): past the
  // head, file-type needs the whole file to find it.
  if (mimeType === 'application/octet-stream' && isTiffMagic(head)) mimeType = (await fileTypeFromFile(path).catch(() => undefined))?.mime ?? 'image/tiff';
  const [type = 'application', subtype = 'octet-stream'] = mimeType.split('/');
  const contentInfo: ContentInfo = { mime: { mime: mimeType, type, subtype } };
  if (type === 'video') {
    const video = await probeVideo(path, subtype);
    if (video) contentInfo.video = video;
    return { mimeType, isImage: false, contentInfo };
  }
  if (type !== 'image') return { mimeType, isImage: false, contentInfo };
  const image = await readImageInfo(path, mimeType);
  if (!image) return { mimeType, isImage: false, contentInfo };
  contentInfo.image = image;
  return { mimeType, isImage: image.width * image.height <= MAX_INPUT_PIXELS, contentInfo };
}

/**
 * inspectFile for bytes whose head the caller holds: the file itself (`withPath` lends a local
 * path) is opened only when the type needs more than the head (a TIFF, a video, an image). A file
 * of any other type is judged from the head alone, exactly as inspectFile would judge it.
 */
export async function inspectHead(head: Buffer, withPath: (inspect: (path: string) => Promise<Inspection>) => Promise<Inspection>): Promise<Inspection> {
  const mimeType = await sniffMime(head);
  const [type = 'application', subtype = 'octet-stream'] = mimeType.split('/');
  const needsFile = type === 'video' || type === 'image' || (mimeType === 'application/octet-stream' && isTiffMagic(head));
  if (needsFile) return withPath((path) => inspectFile(path, head));
  return { mimeType, isImage: false, contentInfo: { mime: { mime: mimeType, type, subtype } } };
}

/** Magic numbers first; then the text formats file-type leaves out (SVG, plain text). */
export async function sniffMime(head: Buffer): Promise<string> {
  const detected = await magicType(head);
  // An uncompressed true-colour TGA starts 00 00 02 00, which file-type reads as a Windows cursor;
  // a real ICO/CUR has at least one directory entry (bytes 4-5), a colour-map-less TGA has 0 there.
  if (detected?.mime === 'image/x-icon' && head.length >= 6 && head.readUInt16LE(4) === 0 && isTga(head)) return 'image/x-tga';
  if (detected) return detected.mime;
  if (head.length === 0) return 'application/octet-stream';
  if (looksLikeText(head)) {
    const text = head.toString('utf8', 0, Math.min(head.length, 4096)).replace(/^\uFEFF/, '').trimStart();
    if (/^(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*(<!DOCTYPE svg[^>]*>\s*)?<svg[\s>]/i.test(text)) return 'image/svg+xml';
    return 'text/plain';
  }
  if (isTga(head)) return 'image/x-tga';
  if (isPcx(head)) return 'image/x-pcx';
  return 'application/octet-stream';
}

/** Little- or big-endian TIFF header (II*\0 / MM\0*), BigTIFF included. */
function isTiffMagic(h: Buffer): boolean {
  if (h.length < 8) return false;
  const order = h.toString('latin1', 0, 2);
  const magic = order === 'II' ? h.readUInt16LE(2) : order === 'MM' ? h.readUInt16BE(2) : 0;
  return magic === 42 || magic === 43;
}

function looksLikeText(head: Buffer): boolean {
  if (head.includes(0)) return false;
  // A truncated multi-byte sequence at the end of the head is fine; anything else must decode.
  const sample = head.subarray(0, Math.max(0, head.length - 4));
  return Buffer.from(sample.toString('utf8'), 'utf8').equals(sample);
}

/** PCX: manufacturer 0x0A, a known version, encoding 0 or 1, sane bit depth. */
function isPcx(h: Buffer): boolean {
  return h.length >= 128 && h[0] === 0x0a && [0, 2, 3, 4, 5].includes(h[1] ?? -1) && (h[2] === 0 || h[2] === 1) && [1, 2, 4, 8].includes(h[3] ?? -1);
}

/** TGA has no magic; accept only the common uncompressed/RLE colour and grey image types with sane fields. */
function isTga(h: Buffer): boolean {
  if (h.length < 18) return false;
  const colorMapType = h[1] ?? 255;
  const imageType = h[2] ?? 255;
  const depth = h[16] ?? 0;
  const width = h.readUInt16LE(12);
  const height = h.readUInt16LE(14);
  return colorMapType <= 1 && [1, 2, 3, 9, 10, 11].includes(imageType) && [8, 15, 16, 24, 32].includes(depth) && width > 0 && height > 0;
}

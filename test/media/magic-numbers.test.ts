import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileTypeFromBuffer } from 'file-type';
import { describe, expect, test } from 'vitest';
import { magicType } from '../../src/media/pipeline/magic-numbers.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const EXTENSIONS = new Set(['.png', '.jpg', '.gif', '.ico', '.gz', '.zip', '.wasm', '.woff2', '.ttf', '.node', '.svg', '.xml', '.heic', '.pdf', '.webp']);

/** Real files of many types: the packages' own images, fonts, archives, binaries, and the media fixtures. */
function sampleFiles(): string[] {
  const found: string[] = [];
  const perExtension = new Map<string, number>();
  const walk = (dir: string, depth: number): void => {
    if (depth > 8) return;
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(p, depth + 1);
      else if (entry.isFile() && EXTENSIONS.has(path.extname(entry.name))) {
        const n = perExtension.get(path.extname(entry.name)) ?? 0;
        if (n < 6) {
          perExtension.set(path.extname(entry.name), n + 1);
          found.push(p);
        }
      }
    }
  };
  walk(path.join(ROOT, 'node_modules'), 0);
  walk(path.join(ROOT, 'test/media/fixtures'), 0);
  return found;
}

const ascii = (s: string) => Buffer.from(s, 'latin1');
const withTail = (head: Buffer) => Buffer.concat([head, Buffer.alloc(200, 0x20)]);

// Signatures file-type reads as text (checkString), with offsets, masks and a UTF-16 text.
const crafted: Array<[string, Buffer]> = [
  ['pdf', withTail(ascii('%PDF-1.7\n'))],
  ['gif', withTail(ascii('GIF89a'))],
  ['webp', withTail(Buffer.concat([ascii('RIFF'), Buffer.from([0x10, 0, 0, 0]), ascii('WEBPVP8 ')]))],
  ['wav', withTail(Buffer.concat([ascii('RIFF'), Buffer.from([0x10, 0, 0, 0]), ascii('WAVEfmt ')]))],
  ['mp3 id3', withTail(ascii('ID3\x03\x00\x00\x00\x00\x00\x00'))],
  ['mp3 frame (masked)', withTail(Buffer.from([0xff, 0xfb, 0x90, 0x64]))],
  ['aac frame (masked)', withTail(Buffer.from([0xff, 0xf1, 0x50, 0x80]))],
  ['ogg opus', withTail(Buffer.concat([ascii('OggS'), Buffer.alloc(24), ascii('OpusHead')]))],
  ['postscript', withTail(ascii('%!PS-Adobe-3.0 EPSF-3.0\n'))],
  ['xml utf-16be', withTail(Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from('<?xml version="1.0"?>'.split('').flatMap((c) => [0, c.charCodeAt(0)]))]))],
  ['xml utf-16le', withTail(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('<?xml version="1.0"?>', 'utf16le')]))],
  ['tar', Buffer.concat([Buffer.alloc(257), ascii('ustar\x0000'), Buffer.alloc(300)])],
  ['text', ascii('hello, world\n')],
  ['two bytes', Buffer.from([0x42, 0x4d])],
  ['one byte', Buffer.from([0x42])],
  ['empty', Buffer.alloc(0)],
];

describe('magicType', () => {
  test('answers as file-type for real files, whole heads and truncated ones', async () => {
    const files = sampleFiles();
    expect(files.length).toBeGreaterThan(20);
    const seen = new Set<string>();
    for (const file of files) {
      const head = fs.readFileSync(file).subarray(0, 64 * 1024);
      for (const length of [head.length, 4100, 512, 64, 33, 16, 12, 8, 4, 3, 2]) {
        const bytes = head.subarray(0, Math.min(length, head.length));
        const expected = await fileTypeFromBuffer(bytes);
        expect(await magicType(bytes), `${file} (${bytes.length} bytes)`).toEqual(expected);
        if (expected) seen.add(expected.mime);
      }
    }
    // The comparison covered more than one kind of answer.
    expect(seen.size).toBeGreaterThan(5);
  });

  test.each(crafted)('answers as file-type for %s', async (_name, bytes) => {
    expect(await magicType(bytes)).toEqual(await fileTypeFromBuffer(bytes));
  });

  test('answers as file-type for bytes of no known type, and for them with every crafted signature spliced in', async () => {
    for (let i = 0; i < 50; i++) {
      const bytes = crypto.randomBytes(64 * 1024);
      expect(await magicType(bytes)).toEqual(await fileTypeFromBuffer(bytes));
    }
    for (const [, signature] of crafted) {
      const bytes = Buffer.concat([signature.subarray(0, 40), crypto.randomBytes(8000)]);
      expect(await magicType(bytes)).toEqual(await fileTypeFromBuffer(bytes));
    }
  });

  test('detects the crafted signatures it is meant to (not only undefined = undefined)', async () => {
    const detected = await Promise.all(crafted.map(async ([, b]) => (await magicType(b))?.mime));
    expect(detected.filter(Boolean).length).toBeGreaterThan(8);
  });
});

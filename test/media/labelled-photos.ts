/**
 * A small labelled set of real photographs, all from npm packages (nothing is downloaded at test
 * time), for measuring what the labels add-on reports:
 *   - the eight thumbnails and the party photo of `samples.jpg` in @vladmandic/human (MIT, assets/):
 *     people;
 *   - `img/cat.jpg` (a kitten in a bush), `img/cat-blur.jpg` (a kitten's head, shallow focus),
 *     `img/xtc.jpg` (a pink pill on black) and `img/cells.jpg` (a microscope image of cells) from
 *     the test images package `ij-test` 1.14.1 (MIT, a devDependency);
 *   - `test/media/fixtures/squeezenet-cat.jpg`: the tabby cat that `deeplearn-squeezenet` 0.2.0
 *     (Apache-2.0) ships as its demo image, copied as it is.
 * `expected` are the labels a reader names at first sight (each must be found: recall); `allowed`
 * are other things truly in the picture, too small or partial to require (reporting them is not
 * an error). Anything else reported counts against precision. Labels are Rekognition leaf names.
 */
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';

const require = createRequire(import.meta.url);
const human = path.join(path.dirname(require.resolve('@vladmandic/human')), '..', 'assets', 'samples.jpg');
const ijTest = path.join(path.dirname(require.resolve('ij-test')), 'img');
const fixtures = path.join(path.dirname(new URL(import.meta.url).pathname), 'fixtures');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-labelled-'));

export interface LabelledPhoto {
  name: string;
  /** Path of a JPEG file. */
  file: () => Promise<string>;
  expected: readonly string[];
  allowed: readonly string[];
}

/** A region of samples.jpg as its own JPEG (the thumbnails' columns, found by their black gutters). */
function sample(name: string, left: number, top: number, width: number, height: number): () => Promise<string> {
  return async () => {
    const out = path.join(dir, `${name}.jpg`);
    if (!fs.existsSync(out)) await sharp(human).extract({ left, top, width, height }).jpeg({ quality: 92 }).toFile(out);
    return out;
  };
}

const asIs = (file: string) => async () => file;
const PEOPLE_ALLOWED = ['Face', 'Handbag', 'Mobile Phone', 'Wine Glass', 'Cup', 'Bottle', 'Chair', 'Potted Plant'];

export const LABELLED_PHOTOS: readonly LabelledPhoto[] = [
  { name: 'rendered woman standing', file: sample('render', 0, 0, 158, 158), expected: ['Person'], allowed: ['Face'] },
  { name: 'woman on a couch', file: sample('couch', 166, 0, 151, 158), expected: ['Person'], allowed: ['Face', 'Couch', 'Chair', 'Potted Plant'] },
  { name: 'man at a dinner table', file: sample('dinner', 326, 0, 210, 158), expected: ['Person'], allowed: ['Face', 'Cup', 'Wine Glass', 'Bowl', 'Dining Table', 'Chair', 'Broccoli', 'Potted Plant', 'Knife', 'Fork', 'Spoon'] },
  { name: 'woman taking a selfie', file: sample('selfie', 545, 0, 89, 158), expected: ['Person'], allowed: ['Face', 'Mobile Phone', 'Bottle', 'Refrigerator'] },
  { name: 'woman before a drawn wall', file: sample('wall', 641, 0, 148, 158), expected: ['Person'], allowed: ['Face'] },
  { name: 'woman on a bar stool', file: sample('stool', 797, 0, 106, 158), expected: ['Person'], allowed: ['Face', 'Chair'] },
  { name: 'group at a party', file: sample('group', 911, 0, 211, 158), expected: ['Person'], allowed: PEOPLE_ALLOWED },
  { name: 'three people at a party', file: sample('three', 1130, 0, 142, 158), expected: ['Person'], allowed: PEOPLE_ALLOWED },
  { name: 'party photo with drawn boxes', file: sample('party', 0, 170, 1280, 988), expected: ['Person'], allowed: [...PEOPLE_ALLOWED, 'Dining Table'] },
  { name: 'kitten in a bush', file: asIs(path.join(ijTest, 'cat.jpg')), expected: ['Cat'], allowed: ['Potted Plant'] },
  { name: "kitten's head, blurred background", file: asIs(path.join(ijTest, 'cat-blur.jpg')), expected: ['Cat'], allowed: [] },
  { name: 'tabby cat lying on a cat tree', file: asIs(path.join(fixtures, 'squeezenet-cat.jpg')), expected: ['Cat'], allowed: ['Couch', 'Bed'] },
  { name: 'pink pill on black', file: asIs(path.join(ijTest, 'xtc.jpg')), expected: [], allowed: [] },
  { name: 'cells under a microscope', file: asIs(path.join(ijTest, 'cells.jpg')), expected: [], allowed: [] },
];

/** A cat and nothing else: the kitten in a bush, where BlazeFace finds a "face". */
export const catPhoto = (): string => path.join(ijTest, 'cat.jpg');

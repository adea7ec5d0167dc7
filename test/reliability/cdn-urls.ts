/**
 * Random CDN URLs: chains of real and made-up operations whose arguments are drawn from
 * borderline values (zero, limits and limits + 1, overflows, percentages, negative offsets) and
 * from garbage (empty, encoded NUL, invalid escapes, long strings, prototype names), plus
 * structural damage (missing separators, doubled slashes, odd uuids).
 */
import type { Random } from './random.js';

type Slot =
  | 'format' | 'quality' | 'yesno' | 'strip' | 'dims' | 'dims1' | 'dimsRel' | 'align' | 'ratio' | 'tag' | 'cropType'
  | 'num' | 'small' | 'angle' | 'color' | 'uuid' | 'opacity' | 'text' | 'srgb' | 'filter' | 'radii' | 'stretch' | 'any';

/** Each operation's argument shapes (several when the syntax has variants). */
const SHAPES: Record<string, Slot[][]> = {
  format: [['format']],
  quality: [['quality']],
  progressive: [['yesno']],
  strip_meta: [['strip']],
  gif2video: [[]],
  preview: [[], ['dims']],
  resize: [['dims1']],
  stretch: [['stretch']],
  smart_resize: [['dims']],
  crop: [['dims'], ['dims', 'align'], ['ratio'], ['ratio', 'align'], ['tag'], ['tag', 'ratio'], ['tag', 'dims', 'align']],
  scale_crop: [['dims'], ['dims', 'align'], ['dims', 'cropType'], ['dims', 'cropType', 'align']],
  trim: [[], ['small', 'small']],
  border_radius: [['radii'], ['radii', 'radii']],
  setfill: [['color']],
  zoom_objects: [['small']],
  autorotate: [['yesno']],
  rotate: [['angle']],
  flip: [[]],
  mirror: [[]],
  overlay: [['uuid'], ['uuid', 'dimsRel', 'align', 'opacity']],
  text: [['dimsRel', 'align', 'text']],
  font: [['small', 'color'], ['small', 'color', 'any']],
  text_align: [['any']],
  text_box: [['any'], ['any', 'color', 'small']],
  rect: [['color', 'dimsRel', 'align']],
  brightness: [['num']],
  exposure: [['num']],
  gamma: [['num']],
  contrast: [['num']],
  saturation: [['num']],
  vibrance: [['num']],
  warmth: [['num']],
  enhance: [[], ['small']],
  grayscale: [[]],
  invert: [[]],
  srgb: [['srgb']],
  max_icc_size: [['num']],
  filter: [['filter'], ['filter', 'num']],
  blur: [[], ['num']],
  sharp: [[], ['small']],
  blur_region: [['dimsRel', 'align'], ['dimsRel', 'align', 'small'], ['tag']],
  rasterize: [[]],
  json: [[]],
  inline: [['yesno']],
  detect_faces: [[]],
};

const FAKE_OPS = ['', 'RESIZE', 'resize ', 'Resize', 'nope', '..', '.', '%00', '__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'x'.repeat(300), '%E2%80%8Bresize', 'gif2video/gif2video', 'main', 'nth', 'archive'];

/** Values at and around the limits the spec and the code name. `huge` adds 3001..16385. */
const MODEST_NUMBERS = ['0', '1', '2', '3', '7', '10', '50', '99', '100', '101', '255', '256', '360', '500', '1000', '2048', '2999', '3000'];
const HUGE_NUMBERS = ['3001', '4999', '5000', '5001', '8192', '10000', '16383', '16384', '16385'];
const OVERFLOW_NUMBERS = ['-0', '-1', '-100', '-3000', '65536', '2147483647', '2147483648', '4294967296', '9007199254740993', '99999999999999999999999', '1e3', '1e309', '0.5', '1.', '.5', '1.5', '0x10', '+1', '00000000000000000100', 'NaN', 'Infinity', '-Infinity', '%D9%A1%D9%A2', '1%00'];
const PERCENTS = ['0p', '1p', '50p', '99p', '100p', '101p', '150p', '1000p', '1001p', '-50p', '50%25', '33.3p', '0.001p', 'p'];
const GARBAGE = ['', ' ', '%20', '%00', '%ZZ', '%', '%2F', '%2E%2E', '..', '-', 'x', 'xx', 'null', 'undefined', 'true', '__proto__', 'constructor', '%E2%80%AE', '%F0%9F%92%A9', '%C0%AE', '%FF%FE', 'a'.repeat(1000), '1'.repeat(400), ',', ',,', ':', '%3A', '\\', '%5C', "'", '%22', '%3Cscript%3E', '*', '~', '@'];

const SLOT_VALUES: Partial<Record<Slot, readonly string[]>> = {
  format: ['jpeg', 'png', 'webp', 'avif', 'auto', 'preserve', 'gif', 'svg', 'heic', 'tiff', 'jpg', 'JPEG', 'jxl', 'mp4', 'webm', 'json'],
  quality: ['normal', 'better', 'best', 'lighter', 'lightest', 'smart', 'smart_retina', 'worse', '50'],
  yesno: ['yes', 'no', 'YES', 'true', '1', 'maybe'],
  strip: ['all', 'none', 'sensitive', 'some'],
  tag: ['face', 'faces', 'image', 'object', 'person', 'cat'],
  cropType: ['smart', 'smart_faces_objects', 'smart_faces', 'smart_objects', 'smart_objects_faces', 'smart_face_objects', 'dumb'],
  srgb: ['fast', 'icc', 'keep_profile', 'slow'],
  filter: ['adaris', 'briaril', 'calarel', 'carris', 'cynarel', 'cyren', 'elmet', 'elonni', 'enzana', 'erydark', 'fenralan', 'ferand', 'galen', 'gavin', 'gethriel', 'iorill', 'iothari', 'iselva', 'jadis', 'lavra', 'misiara', 'namala', 'nerion', 'nethari', 'pamaya', 'sarnar', 'sedis', 'sewen', 'sorahel', 'sorlen', 'tarian', 'thellassan', 'varriel', 'varven', 'vevera', 'virkas', 'yedis', 'yllara', 'zatvel', 'zevcen', 'none', 'sepia'],
  stretch: ['on', 'off', 'fill', 'auto'],
  angle: ['0', '90', '180', '270', '360', '-90', '45', '1', '359', '361', '720', '-360', '90.5'],
  opacity: ['0', '50', '100', '101', '-1', '0p', '50p', '100p'],
  color: ['fff', 'ffff', 'ffffff', 'ffffff00', '00000000', '000', '7f7f7f80', 'FFF', 'ggg', 'f', 'ff', 'fffff', 'fffffffff', '%23fff', 'red', 'transparent'],
};

export interface UrlContext {
  /** uuids of uploaded files, images and not. */
  uuids: readonly string[];
  /** Include intermediate sizes above the 3000 px output cap (the work-budget cases). */
  hugeDims: boolean;
  /** Longest chain drawn. */
  maxChain: number;
}

export class CdnUrlGenerator {
  constructor(private readonly rnd: Random, private readonly ctx: UrlContext) {}

  private number(): string {
    const r = this.rnd.next();
    if (r < 0.65) return this.rnd.pick(MODEST_NUMBERS);
    if (r < 0.8 && this.ctx.hugeDims) return this.rnd.pick(HUGE_NUMBERS);
    if (r < 0.8) return String(this.rnd.int(0, 3000));
    return this.rnd.pick(OVERFLOW_NUMBERS);
  }

  private length(): string {
    return this.rnd.chance(0.25) ? this.rnd.pick(PERCENTS) : this.number();
  }

  private garbage(): string {
    if (this.rnd.chance(0.2)) return [...this.rnd.bytes(this.rnd.int(1, 12))].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');
    return this.rnd.pick(GARBAGE);
  }

  private value(slot: Slot): string {
    if (slot === 'any' || this.rnd.chance(0.12)) return this.rnd.chance(0.5) ? this.garbage() : this.number();
    const listed = SLOT_VALUES[slot];
    if (listed) return this.rnd.pick(listed);
    switch (slot) {
      case 'num':
      case 'small':
        return this.number();
      case 'dims': {
        const form = this.rnd.int(0, 9);
        if (form === 0) return `${this.number()}x`;
        if (form === 1) return `x${this.number()}`;
        if (form === 2) return this.rnd.pick(['x', '0x0', '1x1', '100x100x100', 'x100x', '100X100', '100*100', '100x-100']);
        return `${this.number()}x${this.number()}`;
      }
      case 'dims1':
        return this.rnd.pick([`${this.number()}x`, `x${this.number()}`, `${this.number()}x${this.number()}`]);
      case 'dimsRel':
        return `${this.length()}x${this.length()}`;
      case 'align':
        return this.rnd.chance(0.4)
          ? this.rnd.pick(['center', 'top', 'bottom', 'left', 'right', 'centre', 'top,left'])
          : `${this.rnd.chance(0.2) ? '-' : ''}${this.length()},${this.rnd.chance(0.2) ? '-' : ''}${this.length()}`;
      case 'ratio':
        return this.rnd.pick([`${this.number()}:${this.number()}`, '4:3', '1:1', '0:1', '1:0', '16:9', '1.5:1', '1:100000']);
      case 'radii':
        return this.rnd.chance(0.5) ? this.length() : Array.from({ length: this.rnd.int(1, 5) }, () => this.length()).join(',');
      case 'uuid':
        return this.rnd.chance(0.3) ? 'self' : this.rnd.chance(0.8) ? this.rnd.pick(this.ctx.uuids) : this.randomUuid();
      case 'text':
        return this.text();
      default:
        return this.garbage();
    }
  }

  private text(): string {
    const r = this.rnd.next();
    if (r < 0.3) return encodeURIComponent('Hello, world');
    if (r < 0.5) return encodeURIComponent('x'.repeat(this.rnd.int(100, 3000)));
    // Any code point but lone surrogates (those cannot be UTF-8 encoded into a URL at all).
    if (r < 0.7) return encodeURIComponent(String.fromCodePoint(...Array.from({ length: this.rnd.int(1, 40) }, () => this.rnd.int(1, 0x2ffff)).filter((c) => c < 0xd800 || c > 0xdfff)));
    return this.garbage();
  }

  private randomUuid(): string {
    const h = this.rnd.bytes(16).toString('hex');
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
  }

  private operation(): string[] {
    if (this.rnd.chance(0.04)) return [this.rnd.pick(FAKE_OPS), ...Array.from({ length: this.rnd.int(0, 3) }, () => this.garbage())];
    const name = this.rnd.pick(Object.keys(SHAPES));
    const shapes = SHAPES[name]!;
    // Sometimes the wrong number of arguments on purpose.
    const shape = this.rnd.chance(0.08) ? Array.from({ length: this.rnd.int(0, 5) }, (): Slot => 'any') : this.rnd.pick(shapes);
    return [name, ...shape.map((s) => this.value(s))];
  }

  /** One URL path (starting with '/'). */
  next(): string {
    const uuid = this.rnd.chance(0.03) ? this.rnd.pick([this.randomUuid(), 'not-a-uuid', `${this.rnd.pick(this.ctx.uuids)}~1`, '']) : this.rnd.pick(this.ctx.uuids);
    const n = this.rnd.chance(0.7) ? this.rnd.int(1, Math.min(4, this.ctx.maxChain)) : this.rnd.int(1, this.ctx.maxChain);
    const segments: string[] = [uuid];
    for (let i = 0; i < n; i++) segments.push(this.rnd.chance(0.02) ? this.rnd.pick(['', '--', '_']) : '-', ...this.operation());
    if (this.rnd.chance(0.1)) segments.push(this.rnd.pick(['image.png', 'a%2Fb.jpg', '..%2F..%2Fetc%2Fpasswd', 'x'.repeat(300), '%00.png', '']));
    let path = `/${segments.join('/')}/`;
    if (this.rnd.chance(0.01)) path = path.replace(/\/-\//, '//-//');
    if (this.rnd.chance(0.01)) path = path.slice(0, this.rnd.int(1, path.length));
    return path;
  }
}

import { describe, expect, test } from 'vitest';
import { appendPlan, parsePlan } from '../../src/media/plan.js';
import { AppError } from '../../src/core/errors.js';

const segs = (url: string): string[] => url.split('/').filter((s) => s !== '');

function err(url: string): AppError {
  try {
    parsePlan(segs(url));
  } catch (e) {
    expect(e).toBeInstanceOf(AppError);
    return e as AppError;
  }
  throw new Error(`expected ${url} to be refused`);
}

describe('parsePlan accepts', () => {
  const ok: [string, string, unknown][] = [
    ['-/resize/300x/', 'resize', { w: 300 }],
    ['-/resize/x200/', 'resize', { h: 200 }],
    ['-/resize/300x200/', 'resize', { w: 300, h: 200 }],
    ['-/preview/', 'preview', {}],
    ['-/preview/500x400/', 'preview', { w: 500, h: 400 }],
    ['-/smart_resize/300x300/', 'smart_resize', { w: 300, h: 300 }],
    ['-/format/webp/', 'format', 'webp'],
    ['-/format/jpg/', 'format', 'jpeg'],
    ['-/format/auto/', 'format', 'auto'],
    ['-/format/preserve/', 'format', 'preserve'],
    ['-/quality/smart_retina/', 'quality', 'smart_retina'],
    ['-/quality/lightest/', 'quality', 'lightest'],
    ['-/progressive/yes/', 'progressive', true],
    ['-/strip_meta/sensitive/', 'strip_meta', 'sensitive'],
    ['-/crop/100x50/', 'crop', { kind: 'size', size: { w: { value: 100, unit: 'px' }, h: { value: 50, unit: 'px' } }, align: { x: { value: 0, unit: 'px' }, y: { value: 0, unit: 'px' } } }],
    ['-/crop/50px50p/center/', 'crop', { kind: 'size', size: { w: { value: 50, unit: 'p' }, h: { value: 50, unit: 'p' } }, align: { keyword: 'center' } }],
    ['-/crop/100x50/-10,20p/', 'crop', { kind: 'size', size: { w: { value: 100, unit: 'px' }, h: { value: 50, unit: 'px' } }, align: { x: { value: -10, unit: 'px' }, y: { value: 20, unit: 'p' } } }],
    ['-/crop/16:9/', 'crop', { kind: 'ratio', x: 16, y: 9, align: { keyword: 'center' } }],
    ['-/crop/4:3/top/', 'crop', { kind: 'ratio', x: 4, y: 3, align: { keyword: 'top' } }],
    ['-/scale_crop/100x100/', 'scale_crop', { w: 100, h: 100, type: null, align: { x: { value: 0, unit: 'px' }, y: { value: 0, unit: 'px' } } }],
    ['-/scale_crop/100x100/center/', 'scale_crop', { w: 100, h: 100, type: null, align: { keyword: 'center' } }],
    ['-/scale_crop/100x100/smart/', 'scale_crop', { w: 100, h: 100, type: 'smart', align: { keyword: 'center' } }],
    ['-/scale_crop/100x100/smart_objects_faces/0p,100p/', 'scale_crop', { w: 100, h: 100, type: 'smart_objects_faces', align: { x: { value: 0, unit: 'p' }, y: { value: 100, unit: 'p' } } }],
    ['-/crop/face/', 'crop', { kind: 'object', tag: 'face', ratio: null, size: null, align: { keyword: 'center' } }],
    ['-/crop/image/4:3/', 'crop', { kind: 'object', tag: 'image', ratio: { x: 4, y: 3 }, size: null, align: { keyword: 'center' } }],
    ['-/crop/traffic_light/150px200p/top/', 'crop', { kind: 'object', tag: 'traffic_light', ratio: null, size: { w: { value: 150, unit: 'p' }, h: { value: 200, unit: 'p' } }, align: { keyword: 'top' } }],
    ['-/zoom_objects/50/', 'zoom_objects', 50],
    ['-/blur_region/faces/', 'blur_region', { faces: true, strength: 10 }],
    ['-/blur_region/faces/300/', 'blur_region', { faces: true, strength: 300 }],
    ['-/main_colors/3/', 'main_colors', 3],
    ['-/main_colors/', 'main_colors', 5],
    ['detect_faces/', 'detect_faces', null],
    ['-/scale_crop/100x100/30p,70p/', 'scale_crop', { w: 100, h: 100, type: null, align: { x: { value: 30, unit: 'p' }, y: { value: 70, unit: 'p' } } }],
    ['-/trim/', 'trim', { tolerance: 10, padding: 0 }],
    ['-/trim/20/5/', 'trim', { tolerance: 20, padding: 5 }],
    ['-/setfill/ece3d2/', 'setfill', { r: 0xec, g: 0xe3, b: 0xd2, alpha: 1 }],
    ['-/setfill/fff/', 'setfill', { r: 255, g: 255, b: 255, alpha: 1 }],
    ['-/rotate/90/', 'rotate', 90],
    ['-/rotate/-45/', 'rotate', -45],
    ['-/autorotate/no/', 'autorotate', false],
    ['-/brightness/-100/', 'brightness', -100],
    ['-/exposure/500/', 'exposure', 500],
    ['-/gamma/0/', 'gamma', 0],
    ['-/contrast/500/', 'contrast', 500],
    ['-/saturation/-100/', 'saturation', -100],
    ['-/vibrance/40/', 'vibrance', 40],
    ['-/warmth/-100/', 'warmth', -100],
    ['-/enhance/', 'enhance', 50],
    ['-/enhance/80/', 'enhance', 80],
    ['-/srgb/keep_profile/', 'srgb', 'keep_profile'],
    ['-/max_icc_size/0/', 'max_icc_size', 0],
    ['-/filter/sedis/', 'filter', { name: 'sedis', amount: 100 }],
    ['-/filter/zevcen/-100/', 'filter', { name: 'zevcen', amount: -100 }],
    ['-/blur/', 'blur', { strength: 10, amount: null }],
    ['-/blur/5000/', 'blur', { strength: 5000, amount: null }],
    ['-/blur/100/-200/', 'blur', { strength: 100, amount: -200 }],
    ['-/sharp/', 'sharp', 5],
    ['-/sharp/20/', 'sharp', 20],
    ['-/border_radius/10,20p/', 'border_radius', { h: [{ value: 10, unit: 'px' }, { value: 20, unit: 'p' }], v: null }],
    ['-/overlay/self/', 'overlay', { uuid: 'self', size: null, at: { keyword: 'center' }, opacity: 1 }],
    ['-/overlay/3addab78-6368-4c55-ac08-22412b6a2a4c/50px50p/right/40p/', 'overlay', {
      uuid: '3addab78-6368-4c55-ac08-22412b6a2a4c', size: { w: { value: 50, unit: 'p' }, h: { value: 50, unit: 'p' } }, at: { keyword: 'right' }, opacity: 0.4 }],
    ['-/text/50px20p/10,10/Hello~sworld~n~~/', 'text', { size: { w: { value: 50, unit: 'p' }, h: { value: 20, unit: 'p' } }, at: { x: { value: 10, unit: 'px' }, y: { value: 10, unit: 'px' } }, text: 'Hello/world\n~' }],
    ['-/font/bold/italic/24/ff0000/notoserif/', 'font', { reset: false, weight: 'bold', style: 'italic', size: 24, color: { r: 255, g: 0, b: 0, alpha: 1 }, family: 'Noto Serif' }],
    ['-/text_align/center/bottom/', 'text_align', { h: 'center', v: 'bottom' }],
    ['-/text_box/fill/00000080/8/', 'text_box', { mode: 'fill', color: { r: 0, g: 0, b: 0, alpha: 128 / 255 }, padding: 8 }],
    ['-/rect/ff000080/10px10p/center/', 'rect', { color: { r: 255, g: 0, b: 0, alpha: 128 / 255 }, size: { w: { value: 10, unit: 'p' }, h: { value: 10, unit: 'p' } }, at: { keyword: 'center' } }],
    ['-/blur_region/10x10/5,5/50/', 'blur_region', { size: { w: { value: 10, unit: 'px' }, h: { value: 10, unit: 'px' } }, at: { x: { value: 5, unit: 'px' }, y: { value: 5, unit: 'px' } }, strength: 50 }],
    ['-/stretch/fill/', 'stretch', 'fill'],
    ['-/inline/no/', 'inline', false],
  ];
  test.each(ok)('%s', (url, name, args) => {
    const plan = parsePlan(segs(url));
    expect(plan.steps).toHaveLength(1);
    expect(plan.steps[0]!.name).toBe(name);
    expect(plan.steps[0]!.args).toEqual(args);
  });

  test('no-param ops', () => {
    for (const op of ['grayscale', 'invert', 'flip', 'mirror', 'rasterize', 'json']) {
      expect(parsePlan(['-', op]).steps[0]!.name).toBe(op);
    }
  });

  test('@clib ops are ignored with their params, canonical and flags', () => {
    const p = parsePlan(segs('-/preview/-/@clib/blocks/1.2.3/uc-img/-/format/webp/-/inline/yes/'));
    expect(p.steps.map((s) => s.name)).toEqual(['preview', 'format', 'inline']);
    // inline only changes a header, so it stays out of the cache key / ETag input.
    expect(p.canonical).toBe('-/preview/-/format/webp');
    expect(p.inline).toBe(true);
    expect(p.isProcessing).toBe(true);
    expect(p.info).toBeNull();
  });

  test('later duplicate of a non-stackable op wins; stackable ops stay', () => {
    const p = parsePlan(segs('-/format/png/-/resize/100x/-/format/webp/-/resize/50x/'));
    expect(p.steps.map((s) => [s.name, s.args])).toEqual([['resize', { w: 100 }], ['format', 'webp'], ['resize', { w: 50 }]]);
  });

  test('json info and isProcessing (raw delivery is a plan without processing)', () => {
    const p = parsePlan(segs('-/json/'));
    expect(p.info).toBe('json');
    expect(p.isProcessing).toBe(true);
    expect(parsePlan(segs('-/inline/yes/-/@clib/blocks/1.2.3/uc-img/')).isProcessing).toBe(false);
  });

  test('empty segments are ignored and leave the canonical form unchanged', () => {
    expect(parsePlan(['gif2video', '', '-', 'format', 'webm', '']).canonical).toBe('-/gif2video/-/format/webm');
    expect(parsePlan('-/preview/100x100//-/format/png/'.split('/')).canonical).toBe('-/preview/100x100/-/format/png');
  });

  test('appendPlan: a group\'s effects then the URL\'s operations, later duplicates winning', () => {
    const both = appendPlan(parsePlan(segs('-/resize/100x/-/format/png/')), parsePlan(segs('-/format/webp/-/inline/no/')));
    expect(both.canonical).toBe('-/resize/100x/-/format/webp');
    expect(both.inline).toBe(false);
    expect(() => appendPlan(parsePlan(segs('-/json/')), parsePlan(segs('-/resize/10x/')))).toThrow(/json/);
    const twenty = parsePlan(segs('-/resize/10x/'.repeat(20)));
    expect(() => appendPlan(twenty, twenty)).toThrow(/Too many operations/);
  });

  test('explicit jpeg raises the cap flag', () => {
    expect(parsePlan(segs('-/format/jpeg/')).explicitJpeg).toBe(true);
    expect(parsePlan(segs('-/format/png/')).explicitJpeg).toBe(false);
  });

  test('gif2video without -/ and with companions', () => {
    const p = parsePlan(segs('gif2video/-/format/webm/-/quality/best/-/resize/100x/-/crop/50x50/center/'));
    expect(p.video).toBe('webm');
    expect(parsePlan(['gif2video']).video).toBe('mp4');
  });
});

describe('parsePlan refuses with 400 naming the operation', () => {
  const bad: [string, RegExp][] = [
    ['-/nonsense/1/', /Unknown operation "nonsense"/],
    ['resize/100x/', /Expected "-\/" before operation "resize"/],
    ['-/', /Empty operation/],
    ['-/resize/', /"resize".*at least 1/],
    ['-/resize/x/', /"resize".*WxH/],
    ['-/resize/0x100/', /"resize".*width must be between 1/],
    ['-/resize/100x200x3/', /"resize"/],
    ['-/resize/99999x/', /"resize".*width must be between/],
    ['-/preview/abc/', /"preview"/],
    ['-/smart_resize/300x/', /"smart_resize".*both width and height/],
    ['-/format/gif/', /"format".*must be one of/],
    ['-/format/mp4/', /"format".*only valid together with gif2video/],
    ['-/quality/ultra/', /"quality"/],
    ['-/progressive/maybe/', /"progressive"/],
    ['-/strip_meta/some/', /"strip_meta"/],
    ['-/crop/', /"crop"/],
    ['-/crop/100/', /"crop".*WxH/],
    ['-/crop/0x10/', /"crop".*positive/],
    ['-/crop/10x10/middle/', /"crop".*alignment/],
    ['-/crop/10x10/1,2,3/', /"crop".*alignment/],
    ['-/crop/0:3/', /"crop".*ratio parts must be positive/],
    ['-/crop/unicorn/', /"crop".*or a tag/],
    ['-/crop/face/100x100/', /"crop".*percent of its box/],
    ['-/crop/face/4:3/center/x/', /"crop"/],
    ['-/scale_crop/100x/', /"scale_crop".*both/],
    ['-/scale_crop/100x100/weird/', /"scale_crop".*type must be one of/],
    ['-/scale_crop/100x100/10,10/', /"scale_crop".*percent/],
    ['-/scale_crop/100x100/smart/center/x/', /"scale_crop"/],
    ['-/trim/5/', /"trim"/],
    ['-/trim/300/0/', /"trim".*tolerance must be between 0 and 255/],
    ['-/trim/10/-1/', /"trim".*padding/],
    ['-/border_radius/', /"border_radius"/],
    ['-/border_radius/1,2,3,4,5/', /"border_radius".*1 to 4/],
    ['-/border_radius/-5/', /"border_radius"/],
    ['-/border_radius/10/1,,2/', /"border_radius"/],
    ['-/setfill/red/', /"setfill".*hex/],
    ['-/setfill/12345/', /"setfill".*hex/],
    ['-/zoom_objects/101/', /"zoom_objects".*between 1 and 100/],
    ['-/zoom_objects/0/', /"zoom_objects".*between 1 and 100/],
    ['-/autorotate/maybe/', /"autorotate"/],
    ['-/rotate/abc/', /"rotate".*integer/],
    ['-/rotate/361/', /"rotate".*between -360 and 360/],
    ['-/flip/1/', /"flip".*at most 0/],
    ['-/mirror/x/', /"mirror"/],
    ['-/brightness/101/', /"brightness".*between -100 and 100/],
    ['-/brightness/', /"brightness"/],
    ['-/exposure/-501/', /"exposure"/],
    ['-/gamma/-1/', /"gamma"/],
    ['-/gamma/1001/', /"gamma"/],
    ['-/contrast/-101/', /"contrast"/],
    ['-/saturation/501/', /"saturation"/],
    ['-/vibrance/1.5/', /"vibrance".*integer/],
    ['-/warmth/101/', /"warmth"/],
    ['-/enhance/101/', /"enhance"/],
    ['-/grayscale/yes/', /"grayscale"/],
    ['-/invert/1/', /"invert"/],
    ['-/srgb/slow/', /"srgb"/],
    ['-/max_icc_size/-1/', /"max_icc_size"/],
    ['-/filter/nope/', /"filter".*unknown filter name "nope"/],
    ['-/filter/sedis/201/', /"filter".*between -100 and 200/],
    ['-/filter/sedis/-101/', /"filter"/],
    ['-/blur/5001/', /"blur".*between 0 and 5000/],
    ['-/blur/10/101/', /"blur".*amount must be between -200 and 100/],
    ['-/blur/10/-201/', /"blur"/],
    ['-/sharp/21/', /"sharp".*between 0 and 20/],
    ['-/blur_region/faces/5001/', /"blur_region".*strength/],
    ['-/blur_region/faces/10/10/', /"blur_region".*at most 2/],
    ['-/blur_region/10x10/center/', /"blur_region".*X,Y/],
    ['-/rasterize/yes/', /"rasterize"/],
    ['-/overlay/not-a-uuid/', /"overlay".*UUID or "self"/],
    ['-/overlay/self/50px50p/10,10/101p/', /"overlay".*opacity must be between 0 and 100/],
    ['-/overlay/self/wide/', /"overlay".*WxH/],
    ['-/text/50px50p/10,10/', /"text".*WxH\/X,Y\/text/],
    ['-/text/50px50p/10,10/a/b/', /"text".*at most 3/],
    ['-/text/big/10,10/hi/', /"text".*WxH/],
    ['-/font/huge/', /"font".*unexpected or misplaced parameter "huge"/],
    ['-/font/dejavu/bold/', /"font".*misplaced parameter "bold"/],
    ['-/font/0/', /"font".*size must be between 1 and 1000/],
    ['-/text_align/middle/', /"text_align"/],
    ['-/text_align/left/up/', /"text_align"/],
    ['-/text_box/box/', /"text_box"/],
    ['-/text_box/fill/zzz/', /"text_box".*hex/],
    ['-/rect/ff0000/10x10/', /"rect".*at least 3/],
    ['-/rect/ff0000/10x10/far/', /"rect".*alignment/],
    ['-/inline/maybe/', /"inline"/],
    ['-/json/-/resize/10x/', /"json".*last operation/],
    ['-/json/x/', /"json"/],
    ['gif2video/-/grayscale/', /"grayscale".*cannot be combined with gif2video/],
    ['gif2video/-/format/webp/', /"format".*mp4 or webm/],
    ['detect_faces/x/', /"detect_faces"/],
    ['detect_faces/-/resize/10x/', /"detect_faces".*cannot be combined/],
    ['-/main_colors/0/', /"main_colors".*between 1 and 32/],
    ['-/main_colors/3/-/resize/10x/', /"main_colors".*last operation/],
  ];
  test.each(bad)('%s', (url, message) => {
    const e = err(url);
    expect(e.status).toBe(400);
    expect(e.message).toMatch(message);
  });
});

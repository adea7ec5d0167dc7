/**
 * exifr's option sets, each made once. exifr keeps every options object it is given in a
 * module-level Map (`Options.useCached`, never emptied), keyed by the object itself: an object
 * literal per call kept about 4 KB per parse for good (the soak's V8 heap grew about 8 MB per
 * 1,000 image uploads; docs/reliability.md). Call exifr only with these constants.
 */
import type exifr from 'exifr';

/** exifr's options type (its typings do not export the interface by name). */
type Options = Exclude<Parameters<typeof exifr.parse>[1], boolean | undefined | readonly unknown[]>;

/** Upload-time image facts: the original's date and its GPS position (image-info.ts). */
export const DATE_AND_GPS_TAGS: Options = Object.freeze({
  pick: ['DateTimeOriginal', 'GPSLatitude', 'GPSLongitude', 'GPSLatitudeRef', 'GPSLongitudeRef'],
  reviveValues: false,
});

/** The CDN's `-/json/`: the date the picture was taken (info.ts). */
export const DATE_TAG: Options = Object.freeze({ pick: ['DateTimeOriginal'], reviveValues: false });

/** EXIF carried into an encoded result (encode.ts), with or without the GPS directory. */
function carriedExif(gps: boolean): Options {
  return Object.freeze({
    tiff: true, ifd0: {}, exif: true, gps, ifd1: false, interop: false, makerNote: false, userComment: false,
    translateKeys: true, translateValues: false, reviveValues: false, mergeOutput: false,
  } as Options);
}
export const CARRIED_EXIF: Options = carriedExif(true);
export const CARRIED_EXIF_NO_GPS: Options = carriedExif(false);

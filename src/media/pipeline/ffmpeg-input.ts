/**
 * How every ffmpeg and ffprobe call opens its input: by the file protocol only, with a demuxer from
 * a fixed list of video containers, named outright when the container is known. A file is not
 * allowed to choose how it is read: an HLS playlist (however it is named or wrapped) would have the
 * tool open every entry it lists (`file:`, `http:`, `concat:`, `subfile:`), and the concat or
 * image-sequence demuxers read other files too. The sandbox (src/launcher/sandbox.ts) stops
 * such reads anyway; this keeps the tools from trying.
 */

/** The containers we read; ffmpeg refuses any other demuxer, also one a container nests. */
const DEMUXERS = ['mov', 'matroska', 'ogg', 'avi', 'flv', 'mpeg', 'mpegts', 'asf', 'gif'];

/** ffmpeg's demuxer for a sniffed `video/*` subtype (or our own output format). */
const DEMUXER_BY_SUBTYPE: Record<string, string> = {
  mp4: 'mov', quicktime: 'mov', '3gpp': 'mov', 'x-m4v': 'mov',
  webm: 'matroska', 'x-matroska': 'matroska', ogg: 'ogg',
  'vnd.avi': 'avi', 'x-msvideo': 'avi', avi: 'avi', 'x-flv': 'flv',
  mpeg: 'mpeg', mp2t: 'mpegts', 'x-ms-asf': 'asf', 'x-ms-wmv': 'asf', gif: 'gif',
};

/** The demuxer for a subtype or format name, or null to let ffmpeg pick among the allowed ones. */
export function demuxerFor(subtypeOrFormat: string): string | null {
  if (DEMUXERS.includes(subtypeOrFormat)) return subtypeOrFormat;
  return DEMUXER_BY_SUBTYPE[subtypeOrFormat] ?? null;
}

/** Input options, placed before `-i`: protocols, demuxers, and the demuxer when it is known. */
export function pinnedInput(demuxer: string | null): string[] {
  return ['-protocol_whitelist', 'file', '-format_whitelist', DEMUXERS.join(','), ...(demuxer ? ['-f', demuxer] : [])];
}

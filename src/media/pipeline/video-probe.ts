/**
 * `content_info.video` from ffprobe: container format, duration (ms), overall bitrate (kbit/s) and
 * every audio and video stream. ffprobe reads only what it needs of a local file (headers, the
 * index), so it is cheap for any size; it runs as a child process (started by the launcher helper)
 * confined to that one file (no network, nothing else readable) and bounded in time and memory,
 * with its demuxer pinned (./ffmpeg-input.ts); a file it cannot read simply has no video info.
 */
import { launchTool } from '../../launcher/sandbox.js';
import type { VideoInfo } from '../../core/file-record.js';
import { demuxerFor, pinnedInput } from './ffmpeg-input.js';

export const PROBE_TIMEOUT_MS = 20_000;

interface ProbeStream {
  codec_type?: string;
  codec_name?: string;
  width?: number;
  height?: number;
  bit_rate?: string;
  avg_frame_rate?: string;
  r_frame_rate?: string;
  channels?: number;
  sample_rate?: string;
}

interface ProbeOutput {
  streams?: ProbeStream[];
  format?: { format_name?: string; duration?: string; bit_rate?: string; tags?: { major_brand?: string } };
}

/** Container names as the public service reports them, by the sniffed mime subtype. */
const FORMAT_BY_SUBTYPE: Record<string, string> = {
  mp4: 'mp4', webm: 'webm', ogg: 'ogg', quicktime: 'mov', 'x-matroska': 'mkv', 'vnd.avi': 'avi', 'x-msvideo': 'avi',
  'x-flv': 'flv', mpeg: 'mpeg', mp2t: 'mpegts', '3gpp': '3gp', 'x-m4v': 'm4v', 'x-ms-asf': 'asf',
};

const kbps = (bits: string | undefined): number => {
  const n = Number(bits);
  return Number.isFinite(n) && n > 0 ? Math.round(n / 1000) : 0;
};

function frameRate(s: ProbeStream): number {
  for (const text of [s.avg_frame_rate, s.r_frame_rate]) {
    const [num, den] = (text ?? '').split('/').map(Number);
    if (num && den) return Math.round((num / den) * 100) / 100;
  }
  return 0;
}

/** ffprobe's JSON is a few KB; more than this is not a file worth describing. */
const MAX_PROBE_OUTPUT = 4 * 1024 * 1024;

async function run(path: string, demuxer: string | null, timeoutMs: number): Promise<ProbeOutput | null> {
  const args = ['-v', 'error', ...pinnedInput(demuxer), '-print_format', 'json', '-show_format', '-show_streams', '-i', path];
  const chunks: Buffer[] = [];
  // A node that cannot confine ffprobe (the sandbox required but unavailable) describes no video.
  const child = await launchTool('ffprobe', args, { read: [path], write: [] }, { onStdout: (d) => chunks.push(d), maxOutputBytes: MAX_PROBE_OUTPUT }).catch(() => null);
  if (!child) return null;
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const exit = await child.exited;
  clearTimeout(timer);
  if (!exit.started || exit.code !== 0) return null;
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as ProbeOutput;
  } catch {
    return null;
  }
}

/**
 * The file's video facts, or null when it has no video stream or ffprobe cannot read it.
 * `mimeSubtype`: the sniffed subtype (`mp4`, `webm`…), which names the container and the demuxer;
 * with `''` ffprobe picks among the allowed demuxers and `format` is the one it picked.
 */
export async function probeVideo(path: string, mimeSubtype: string, timeoutMs = PROBE_TIMEOUT_MS): Promise<VideoInfo | null> {
  const out = await run(path, demuxerFor(mimeSubtype), timeoutMs);
  const streams = out?.streams ?? [];
  const video = streams.filter((s) => s.codec_type === 'video' && (s.width ?? 0) > 0);
  if (!out || video.length === 0) return null;
  const format = FORMAT_BY_SUBTYPE[mimeSubtype] ?? (out.format?.format_name ?? '').split(',')[0] ?? '';
  const duration = Number(out.format?.duration);
  return {
    audio: streams
      .filter((s) => s.codec_type === 'audio')
      .map((s) => ({ codec: s.codec_name ?? '', bitrate: kbps(s.bit_rate), channels: s.channels ?? 0, sample_rate: Number(s.sample_rate) || 0 })),
    video: video.map((s) => ({ codec: s.codec_name ?? '', width: s.width ?? 0, height: s.height ?? 0, bitrate: kbps(s.bit_rate), frame_rate: frameRate(s) })),
    format,
    bitrate: kbps(out.format?.bit_rate),
    duration: Number.isFinite(duration) && duration > 0 ? Math.round(duration * 1000) : 0,
  };
}

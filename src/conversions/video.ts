/**
 * Video conversion through ffmpeg: size modes, quality, container, cut, and N thumbnails taken
 * evenly over the result. Arguments are built here (pure, `videoArgs`) and run with tool.ts: a
 * child process in its own group, confined to its input and the job's work directory, killed at
 * the job's deadline. The input's demuxer is the one ffprobe found among the allowed containers.
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { VideoInfo } from '../core/file-record.js';
import { probeVideo } from '../media/pipeline/video-probe.js';
import type { VideoFormat, VideoQuality, VideoTarget } from './paths.js';
import { runTool, ToolError } from './tool.js';
import type { ConvertedFile } from './document.js';
import { demuxerFor, pinnedInput } from '../media/pipeline/ffmpeg-input.js';

const X264_CRF: Record<VideoQuality, number> = { best: 18, better: 21, normal: 23, lighter: 27, lightest: 31 };
const VP9_CRF: Record<VideoQuality, number> = { best: 24, better: 30, normal: 34, lighter: 40, lightest: 46 };
const THEORA_Q: Record<VideoQuality, number> = { best: 9, better: 8, normal: 7, lighter: 5, lightest: 3 };

export const VIDEO_CONTENT_TYPES: Record<VideoFormat, string> = { mp4: 'video/mp4', webm: 'video/webm', ogg: 'video/ogg' };

/** The scale/crop/pad filter chain for a size mode; sides even (4:2:0 chroma needs it). */
export function sizeFilter(size: VideoTarget['size']): string {
  const even = 'scale=trunc(iw/2)*2:trunc(ih/2)*2';
  if (!size) return even;
  const { width: w, height: h, mode } = size;
  if (w === null || h === null) return `scale=${w ?? -2}:${h ?? -2}`;
  switch (mode) {
    case 'preserve_ratio':
      return `scale=${w}:${h}:force_original_aspect_ratio=decrease:force_divisible_by=2`;
    case 'change_ratio':
      return `scale=${w}:${h},setsar=1`;
    case 'scale_crop':
      return `scale=${w}:${h}:force_original_aspect_ratio=increase,crop=${w}:${h},setsar=1`;
    case 'add_padding':
      return `scale=${w}:${h}:force_original_aspect_ratio=decrease:force_divisible_by=2,pad=${w}:${h}:(ow-iw)/2:(oh-ih)/2:black,setsar=1`;
  }
}

/** ffmpeg arguments converting `input` (read by `demuxer`) to `output` as `target` says. */
export function videoArgs(input: string, demuxer: string | null, output: string, target: VideoTarget, hasAudio: boolean): string[] {
  const cut = target.cut;
  const seek = cut && cut.startMs > 0 ? ['-ss', (cut.startMs / 1000).toFixed(3)] : [];
  const length = cut && cut.lengthMs !== null ? ['-t', (cut.lengthMs / 1000).toFixed(3)] : [];
  const q = target.quality;
  const codecs: Record<VideoFormat, string[]> = {
    mp4: ['-c:v', 'libx264', '-preset', 'veryfast', '-crf', String(X264_CRF[q]), '-pix_fmt', 'yuv420p', '-movflags', '+faststart', ...(hasAudio ? ['-c:a', 'aac', '-b:a', '128k'] : [])],
    webm: ['-c:v', 'libvpx-vp9', '-b:v', '0', '-crf', String(VP9_CRF[q]), '-deadline', 'realtime', '-cpu-used', '8', '-row-mt', '1', '-pix_fmt', 'yuv420p', ...(hasAudio ? ['-c:a', 'libopus', '-b:a', '96k'] : [])],
    ogg: ['-c:v', 'libtheora', '-q:v', String(THEORA_Q[q]), '-pix_fmt', 'yuv420p', ...(hasAudio ? ['-c:a', 'libvorbis', '-q:a', '4'] : [])],
  };
  return [
    '-hide_banner', '-loglevel', 'error', '-nostdin', ...pinnedInput(demuxer),
    ...seek, '-i', input, ...length,
    '-map', '0:v:0', ...(hasAudio ? ['-map', '0:a:0'] : ['-an']), '-sn', '-dn', '-map_metadata', '-1',
    '-vf', sizeFilter(target.size),
    ...codecs[target.format],
    '-threads', '2', '-f', target.format, '-y', output,
  ];
}

export interface VideoJob {
  input: string;
  target: VideoTarget;
  workDir: string;
  deadline: number;
}

const remaining = (deadline: number): number => Math.max(1, deadline - Date.now());

/** The converted video and its thumbnails (JPEG, in time order). */
export async function convertVideo(job: VideoJob): Promise<{ video: ConvertedFile; thumbs: ConvertedFile[] }> {
  const source = await probeVideo(job.input, '', Math.min(remaining(job.deadline), 20_000));
  if (!source && Date.now() >= job.deadline) throw new ToolError('ffprobe was stopped: the conversion took longer than its time limit.', true);
  if (!source) throw new ToolError('The file is not a video ffmpeg can read (no video stream, or corrupt).', true);
  if (job.target.cut && source.duration > 0 && job.target.cut.startMs >= source.duration) {
    throw new ToolError(`"cut" starts at ${job.target.cut.startMs} ms, after the end of the video (${source.duration} ms).`, true);
  }
  await fsp.mkdir(job.workDir, { recursive: true });
  const output = path.join(job.workDir, `video.${job.target.format}`);
  const access = { read: [job.input], write: [job.workDir] };
  await runTool('ffmpeg', videoArgs(job.input, demuxerFor(source.format), output, job.target, source.audio.length > 0), { timeoutMs: remaining(job.deadline), access, what: 'ffmpeg' });
  const result = await probeVideo(output, job.target.format, Math.min(remaining(job.deadline), 20_000));
  if (!result && Date.now() >= job.deadline) throw new ToolError('ffprobe was stopped: the conversion took longer than its time limit.', true);
  if (!result) throw new ToolError('ffmpeg produced no readable video.', true);
  const thumbs = await thumbnails(output, result, job);
  return { video: { path: output, ext: job.target.format, contentType: VIDEO_CONTENT_TYPES[job.target.format], page: null }, thumbs };
}

/** N frames at the middles of N equal spans of the result. */
async function thumbnails(video: string, info: VideoInfo, job: VideoJob): Promise<ConvertedFile[]> {
  const n = job.target.thumbs;
  const out: ConvertedFile[] = [];
  const access = { read: [], write: [job.workDir] };
  const input = [...pinnedInput(demuxerFor(job.target.format)), '-i', video];
  for (let i = 0; i < n; i++) {
    const at = ((info.duration / 1000) * (i + 0.5)) / n;
    const file = path.join(job.workDir, `thumb-${i}.jpg`);
    const frame = ['-frames:v', '1', '-q:v', '3', '-threads', '1', '-y', file];
    const options = { timeoutMs: remaining(job.deadline), access, what: 'ffmpeg (thumbnail)' };
    await runTool('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-nostdin', '-ss', at.toFixed(3), ...input, ...frame], options);
    // A seek past the last frame (very short videos) writes nothing: take the first frame instead.
    if (!(await fsp.stat(file).then((s) => s.size > 0).catch(() => false))) {
      await runTool('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-nostdin', ...input, ...frame], { ...options, timeoutMs: remaining(job.deadline) });
    }
    out.push({ path: file, ext: 'jpg', contentType: 'image/jpeg', page: i + 1 });
  }
  return out;
}

/** Messages between the remove_bg add-on and its child process (IPC, advanced serialization). */
import type { RemoveBgParams } from './params.js';

export interface RemoveBgRequest {
  id: number;
  /** Local path of the source image. */
  input: string;
  params: RemoveBgParams;
  /** The plugin's entry file and the URL of its model files (file://…/dist/). */
  pluginEntry: string;
  publicPath: string;
  model: 'small' | 'medium' | 'large';
}

export type RemoveBgReply = { id: number; ok: true; png: Uint8Array; width: number; height: number } | { id: number; ok: false; error: string };

/**
 * Whether this node can confine the tools that read untrusted files (src/launcher/sandbox.ts):
 * it starts one confined process, as every conversion will.
 */
import type { Config } from '../config.js';
import { sandboxAvailability, setToolPolicy } from '../launcher/sandbox.js';
import type { DoctorCheck } from './check.js';

export const sandboxCheck: DoctorCheck = {
  name: 'tool sandbox',
  required: false,
  disables:
    'confinement of LibreOffice, poppler and ffmpeg. Missing: document and video conversion, gif2video and video facts at upload are refused (install bubblewrap, allow user namespaces). Off (STOWAGE_TOOL_SANDBOX=off): those tools run unconfined, and a document can make them reach the network and local files',
  async run(config: Config) {
    setToolPolicy({ sandbox: config.toolSandbox, memoryBytes: config.toolMemoryBytes });
    // Off on purpose: the report says what that leaves open.
    if (config.toolSandbox === 'off') return null;
    const found = await sandboxAvailability();
    if (!found.ok) throw new Error(found.reason);
    return `active (${found.detail}); memory bound ${Math.round(config.toolMemoryBytes / 1024 ** 2)} MiB per process`;
  },
};

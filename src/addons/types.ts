/**
 * The add-on module contract. One module per add-on in this folder exports an `Addon`; the table
 * in ./index.ts lists them. The framework (service.ts, runner.ts) does everything else: the REST
 * routes, the durable job, the 409 for a concurrent call, `appdata.<name>` and the
 * `file.info_updated` event written in one transaction, the new file of add-ons that make one.
 */
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { FileRecord } from '../core/file-record.js';

/** Which files an add-on runs on; a target outside them is refused with a 400 at execute time. */
export type AddonAccepts = 'image' | 'any';

export interface AddonInput {
  file: FileRecord;
  /** A local path of the file's bytes (the store's own file, or a spool copy on object storage); read only. */
  path: string;
  /** Aborted when the run exceeds STOWAGE_ADDON_TIMEOUT_MS: stop the child / close the socket. */
  signal: AbortSignal;
  config: Config;
  log: Logger;
}

/** A file an add-on makes (remove_bg): stored as a new file of the same project. */
export interface AddonMadeFile {
  bytes: Buffer;
  filename: string;
  mimeType: string;
}

export interface AddonOutput<D> {
  /** Kept as `appdata.<name>.data`. */
  data: D;
  file?: AddonMadeFile;
  /** Also record a `file.infected` event (virus scan). */
  infected?: boolean;
  /** Remove the target in the same transaction as its appdata (virus scan with purge_infected). */
  removeTarget?: boolean;
}

export interface Addon<P = unknown, D = unknown> {
  /** As the API spells it: `/addons/<name>/execute/`, `appdata.<name>`. */
  readonly name: string;
  /** `appdata.<name>.version`. */
  readonly version: string;
  readonly accepts: AddonAccepts;
  /** True when `run` returns a `file` (its uuid is chosen at execute time, so a re-run makes no second one). */
  readonly makesFile?: boolean;
  /**
   * The request's `params` (undefined when omitted) -> typed params. Throws an AppError 400 naming
   * the field (`params.crop`) for a wrong type or value; see ./params.ts.
   */
  parseParams(raw: unknown): P;
  /**
   * Does the work, off the event loop (a daemon, a worker thread or a child process), bounded by
   * `input.signal`. Throw `AddonError` for a failure retrying cannot mend (status `error` at once);
   * any other error is retried a few times before the status turns `error`.
   */
  run(input: AddonInput, params: P): Promise<AddonOutput<D>>;
  /** Optional start-up check, logged once (and shown by `stowage doctor` where present). */
  probe?(config: Config): Promise<{ ok: boolean; detail: string }>;
}

/** A final failure of an add-on run: the execution's status becomes `error` with this message. */
export class AddonError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AddonError';
  }
}

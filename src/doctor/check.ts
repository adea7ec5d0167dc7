/**
 * What `stowage doctor` runs: one check per outside piece a node may use (database, blob store,
 * Redis, programs, fonts). The kernel's checks are in ./system.ts; a feature that needs another
 * piece (a daemon, a program) writes its own DoctorCheck in its folder and lists it in
 * src/doctor-checks.ts.
 */
import type { Config } from '../config.js';

export interface DoctorCheck {
  /** Short name printed in the report (`database`, `ffmpeg`, …). */
  name: string;
  /** What does not work while this piece is missing, printed next to a failure. */
  disables: string;
  /** A required piece missing makes `stowage doctor` exit 1: a node cannot serve without it. */
  required: boolean;
  /**
   * Resolves with what was found (a version, an address), or with `null` when the piece is not
   * configured on purpose (no Redis URL); throws with what is wrong. Bounded by the runner.
   */
  run(config: Config): Promise<string | null>;
}

export type CheckStatus = 'ok' | 'off' | 'missing' | 'failed';

export interface CheckReport {
  name: string;
  /** ok; off: not configured; missing: an optional piece is absent; failed: a required one is. */
  status: CheckStatus;
  detail: string;
  /** What is lost, when the status is not ok. */
  disables: string | null;
}
